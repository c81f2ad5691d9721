package tgemu

import "github.com/go-telegram/bot/models"

// Paid broadcasts (Bot API, sendMessage, allow_paid_broadcast: "Pass True to
// allow up to 1000 messages per second, ignoring broadcasting limits for a
// fee of 0.1 Telegram Stars per message. The relevant Stars will be
// withdrawn from the bot's balance"). The emulator keeps a Stars balance
// (unlimited unless SetStarBalance is called), charges each accepted paid
// send 0.1 Star, counts paid sends against Limits.Paid, and answers a paid
// send it cannot charge with CannotPayDescription.

// StarTenthsPerPaidMessage is the fee of one paid broadcast message in
// tenths of a Star (0.1 Star).
const StarTenthsPerPaidMessage = 1

// CannotPayDescription is the emulator's answer (400, "Bad Request: " +
// this) to a sendMessage with allow_paid_broadcast true when the balance
// holds less than 0.1 Star. It is a stand-in: Telegram's real answer in
// that case is not documented and was not found in public issues or code.
// BALANCE_TOO_LOW is the MTProto error Telegram documents for a Stars
// payment the balance cannot cover ("the current Telegram Stars balance is
// too low", payments.sendStarsForm), and the Bot API passes MTProto error
// names through as "Bad Request: <NAME>"; the bot's classifier
// (tgapi.IsCannotPay) matches that name and a few wordings around "stars",
// so a differing real text is an assumption to check against the first
// real failure.
const CannotPayDescription = "BALANCE_TOO_LOW"

// SetStarBalance sets the bot's Stars balance in tenths of a Star (10 = 1
// Star = 10 paid messages); a negative value makes it unlimited (the
// default), so paid sends are never refused for their fee.
func (e *Emulator) SetStarBalance(tenths int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.stars = max(tenths, -1)
}

// StarBalance returns the Stars balance in tenths of a Star (-1: unlimited).
func (e *Emulator) StarBalance() int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.stars
}

// PaidSent is the number of accepted sendMessage calls with
// allow_paid_broadcast true (each charged StarTenthsPerPaidMessage when the
// balance is not unlimited).
func (e *Emulator) PaidSent() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.paidSent
}

// UnlimitedStars is the whole Stars getMyStarBalance reports while the
// balance is unlimited (the default).
const UnlimitedStars = 1_000_000_000

// getMyStarBalance answers the balance as a StarAmount: whole Stars in
// amount, the tenths in nanostar_amount (10^8 nanostars per tenth);
// UnlimitedStars while the balance is unlimited.
func (e *Emulator) getMyStarBalance() reply {
	tenths := e.StarBalance()
	if tenths < 0 {
		return okReply(models.StarAmount{Amount: UnlimitedStars})
	}
	return okReply(models.StarAmount{Amount: int(tenths / 10), NanostarAmount: int(tenths%10) * 100_000_000})
}
