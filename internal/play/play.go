package play

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/codemojex/codemojex/internal/demo"
	"github.com/codemojex/codemojex/internal/tgemu"
)

//go:embed static
var static embed.FS

// DefaultAddr is where the page is served unless Options.Addr says.
const DefaultAddr = "127.0.0.1:8090"

// Options configure Start.
type Options struct {
	// Stack starts the bot, Valkey and the emulator (demo.Options: BotBinary,
	// BuildFlags, ValkeyURL, Out). ConsoleAddr "" and HTTPAddr "" (the
	// bot's /metrics and health check) pick free loopback ports, printed
	// at start. ExtraEnv is added after the playground's flood limits.
	Stack demo.Options
	// Addr is the page's address (default DefaultAddr; "127.0.0.1:0" picks
	// a free port).
	Addr string
}

// floodEnv are the bot's message flood limits in the playground: the demo
// turns them off for its scripted burst, the playground shows them (10
// messages per user in 10 s, the excess dropped with a notice).
func floodEnv() []string {
	return []string{"FLOOD_WINDOW=10s", "FLOOD_USER_MESSAGES=10", "FLOOD_USER_TAPS=30"}
}

// Playground is the running playground: the stack and the page's server.
type Playground struct {
	log   *slog.Logger
	stack *demo.Stack
	emu   *tgemu.Emulator
	srv   *http.Server
	url   string
	cast  []User
	// console's sign-in page, auto-submitted with the token
	consoleTmpl *template.Template

	mu     sync.Mutex
	said   map[int64][]said // what users typed, per chat
	taps   map[string]int64 // callback query id -> chat, for its toast
	events []string         // what was staged, newest last
	slow   bool
	bursts int            // bursts staged so far
	wg     sync.WaitGroup // staged goroutines
	ctx    context.Context
	cancel context.CancelFunc
}

// said is one message a user typed (the emulator lists only the bot's).
type said struct {
	id   int
	from string
	text string
	at   time.Time
}

// Start starts the stack (building the bot unless opts.Stack.BotBinary),
// registers the cast's chats and the group with the emulator and serves the
// page. Close it. Errors: the stack's (demo.StartStack), or the page's
// address cannot be listened on.
func Start(ctx context.Context, log *slog.Logger, opts Options) (*Playground, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	addr := opts.Addr
	if addr == "" {
		addr = DefaultAddr
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("play: listen on %s: %w", addr, err)
	}
	so := opts.Stack
	if so.ConsoleAddr == "" {
		if so.ConsoleAddr, err = freeAddr("the console"); err != nil {
			ln.Close()
			return nil, err
		}
	}
	if so.HTTPAddr == "" {
		if so.HTTPAddr, err = freeAddr("the bot's /metrics"); err != nil {
			ln.Close()
			return nil, err
		}
	}
	so.ExtraEnv = append(floodEnv(), so.ExtraEnv...)
	if so.Name == "" {
		so.Name = "play"
	}
	st, err := demo.StartStack(ctx, log, so)
	if err != nil { // "play: …" (so.Name)
		ln.Close()
		return nil, err
	}
	pctx, cancel := context.WithCancel(context.Background())
	p := &Playground{log: log, stack: st, emu: st.Emulator(), cast: Cast(), url: "http://" + ln.Addr().String(),
		consoleTmpl: template.Must(template.New("console").Parse(consolePage)),
		said:        map[int64][]said{}, taps: map[string]int64{}, ctx: pctx, cancel: cancel}
	for _, u := range p.cast {
		p.emu.AddChat(models.Chat{ID: u.ID, Type: models.ChatTypePrivate, FirstName: u.Name})
	}
	p.emu.AddChat(models.Chat{ID: GroupID, Type: models.ChatTypeSupergroup, Title: "Playground group"})
	for _, u := range p.cast {
		if u.Admin { // the group's administrator too: /language in the group sets the board's language
			p.emu.SetChatMemberStatus(GroupID, u.ID, "administrator")
		}
	}
	sub, err := fs.Sub(static, "static")
	if err != nil {
		return nil, fmt.Errorf("play: embedded files: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /", http.FileServerFS(sub))
	mux.HandleFunc("GET /api/state", p.state)
	mux.HandleFunc("POST /api/send", p.send)
	mux.HandleFunc("POST /api/tap", p.tap)
	mux.HandleFunc("POST /api/stage", p.stage)
	mux.HandleFunc("GET /console", p.console)
	p.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := p.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("play: serve", slog.Any("err", err))
		}
	}()
	return p, nil
}

// URL is the page's address, http://host:port.
func (p *Playground) URL() string { return p.url }

// Metrics is the bot's /metrics URL, http://host:port/metrics.
func (p *Playground) Metrics() string { return p.stack.Metrics() }

// Emulator is the Bot API emulator the bot talks to.
func (p *Playground) Emulator() *tgemu.Emulator { return p.emu }

// Close stops the page's server, the staged work, then the stack; its error
// is the stack's (the bot did not stop cleanly).
func (p *Playground) Close() error {
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = p.srv.Shutdown(sctx)
	p.cancel()
	p.wg.Wait()
	return p.stack.Close()
}

// Run starts the playground, prints its address to out and runs until ctx
// ends (Ctrl-C) or the bot exits (an error with its last output).
func Run(ctx context.Context, log *slog.Logger, opts Options, out io.Writer) error {
	if opts.Stack.Out == nil {
		opts.Stack.Out = out
	}
	p, err := Start(ctx, log, opts)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nplayground %s  (open it in a browser; Ctrl-C stops everything)\n", p.URL())
	select {
	case <-ctx.Done():
		return p.Close()
	case <-p.stack.BotDone():
		out := p.stack.BotOutput()
		_ = p.Close()
		return fmt.Errorf("play: the bot exited; its last output:\n%s", tail(out, 4000))
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// freeAddr is a loopback host:port that was free a moment ago, for what
// (named in the error).
func freeAddr(what string) (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("play: a free port for %s: %w", what, err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// event records a staged thing for the page's log.
func (p *Playground) event(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.events = append(p.events, time.Now().Format("15:04:05")+"  "+fmt.Sprintf(format, args...))
	if len(p.events) > 50 {
		p.events = p.events[len(p.events)-50:]
	}
}

// consolePage signs in to the console: a form posting the token to its
// /login, submitted as soon as it loads (the console's cookie is then set
// for its host; the playground and the console are both on 127.0.0.1, the
// same site, so its SameSite=Strict cookie is sent on the redirect).
const consolePage = `<!doctype html><meta charset="utf-8"><title>Signing in to the console</title>
<form id="signin" method="post" action="{{.URL}}/login"><input type="hidden" name="token" value="{{.Token}}">
<p>Signing in to the console at {{.URL}} … <button>Sign in</button></p></form>
<script>document.getElementById("signin").submit()</script>`

func (p *Playground) console(w http.ResponseWriter, _ *http.Request) {
	url, token := p.stack.Console()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_ = p.consoleTmpl.Execute(w, struct{ URL, Token string }{url, token})
}
