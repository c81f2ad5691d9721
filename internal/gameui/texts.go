package gameui

// The user-visible texts of the game UI that are not produced by package
// game, gathered here so that a catalog can replace them (a later issue
// localizes them). Formats name their verbs' arguments.
// The exported ones are asserted by internal/app's end-to-end tests.
const (
	TextNoGame      = "No game is running here. Send /play to start one."
	TextGuessUsage  = "Send /guess followed by your emojis, e.g. /guess 🍎🍌🍇🍒"
	textCorruptGame = "This chat's game could not be read. Send /play to start a new one."
	TextTopEmpty    = "No wins in this chat yet. Send /play to start a game!"
	// textWelcome: code length, the palette joined by spaces.
	textWelcome = "👋 Welcome to Codemojex, the emoji code-breaking game!\n" +
		"Send /play to start a game, then guess the secret code of %d emojis from %s. /help explains the rules."
	textTopTitle  = "🏆 Top players"
	textTopNoName = "player %d"            // user id, for a player with no name
	textTopLine   = "\n%d. %s — %d points" // rank, name, points
	textRunning   = "A game is already running here. Send your guess, or /giveup to end it."
	// textRunningBoard: the running game's board (game.State.Board).
	textRunningBoard   = "A game is already running here.\n%s\nSend your guess, or /giveup to end it."
	textInvalidGuess   = "❌ Not a valid guess: %s. No attempt used."         // the game.GuessError
	textUnknownCommand = "Unknown command /%s. Send /help for the commands." // the command's name

	// /help: after game.HelpText, a header, a line per command (name,
	// description) and a closing line.
	textHelpCommands = "\n\nCommands:\n"
	textHelpCommand  = "/%s — %s\n"
	textHelpGroups   = "In a group, guess with /guess or by replying to one of my messages."
)

// The command menu's descriptions (setMyCommands, /help).
const (
	descPlay   = "Start a new game"
	descGuess  = "Guess the code (in groups): /guess 🍎🍌🍇🍒"
	descGiveUp = "Give up and reveal the code"
	descTop    = "This chat's leaderboard"
	descHelp   = "Rules and commands"
	descStart  = "Welcome"
)

// The board's button labels beside the palette.
const (
	labelBack         = "⌫"
	labelSubmit       = "✅"
	labelSubmitNotYet = "☑️" // ✅ until a composition has every symbol
	labelGiveUp       = "🏳️"
)

// Toasts of board taps.
const (
	ToastGameOver      = "This game is over, /play for a new one"
	ToastFull          = "4 emojis already: ✅ or ⌫"
	ToastEmpty         = "Nothing to remove"
	ToastGaveUp        = "🏳️ Given up"
	toastChooseFirst   = "Choose %d emojis first (%d/%d)" // code length, chosen, code length
	toastCracked       = "🎉 Cracked! +%d points"          // points won
	toastOutOfAttempts = "💥 Out of attempts"
)
