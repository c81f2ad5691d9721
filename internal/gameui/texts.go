package gameui

// The players' texts are the catalog's (internal/i18n, locales/*.yaml),
// in the language of the update (Request.Lang; a group's board in the
// group's: boardLang). These are some of them in English, the default,
// for the end-to-end tests of internal/app to assert
// (TestExportedTextsAreTheEnglishCatalogs keeps them equal).
const (
	TextNoGame     = "No game is running here. Send /play to start one."
	TextGuessUsage = "Send /guess followed by your emojis, e.g. /guess 🍎🍌🍇🍒"
	TextTopEmpty   = "No wins in this chat yet. Send /play to start a game!"
	ToastGameOver  = "This game is over, /play for a new one"
	ToastFull      = "4 emojis already: ✅ or ⌫" // the default code length's
	ToastEmpty     = "Nothing to remove"
	ToastGaveUp    = "🏳️ Given up"
)

// The board's button labels beside the palette (emoji: the same in every
// language).
const (
	labelBack         = "⌫"
	labelSubmit       = "✅"
	labelSubmitNotYet = "☑️" // ✅ until a composition has every symbol
	labelGiveUp       = "🏳️"
)
