// Package config reads codemojex's configuration from the environment, with
// a .env file loaded first (github.com/joho/godotenv) without overriding
// variables that are already set, parsed with github.com/caarlos0/env.
// Every value is validated; an error names the variable and what it expects
// and never repeats the bot token.
package config

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/caarlos0/env/v11"

	"github.com/codemojex/codemojex/redact"
)

// Config is the whole configuration of a codemojex process: one section
// per component, each with its variables (env tags), its defaults and its
// Validate, which names the variable in every error. The sections are
// embedded, so a field reads as before (cfg.Workers). Defaults that are a
// component's constant (worker.DefaultSenders, flood.Default*) come from
// that component (Default), not from a tag.
type Config struct {
	Telegram // TELEGRAM_BOT_TOKEN, TELEGRAM_API_URL, ADMIN_IDS
	Valkey   // VALKEY_URL, VALKEY_KEY_TAG
	Rates    // TELEGRAM_*_RATE, REPLY_LANE_DEPTH: the notifier's limits
	Intake   // BOT_ROLE, HANDLERS, HANDLER_LEASE, TELEGRAM_WEBHOOK_*
	Worker   // WORKERS, WORKER_LEASE
	Flood    // FLOOD_*: the intake limits
	HTTP     // HTTP_ADDR
	Console  // CONSOLE_ADDR, CONSOLE_TOKEN, CONSOLE_TRUSTED_PROXIES
	Log      // LOG_LEVEL
}

// Default returns the defaults that are not in an env tag: the ones a
// component owns (lanes.DefaultTag, worker.DefaultSenders,
// flood.DefaultLimits). FromEnv parses the environment over it.
func Default() Config {
	return Config{Valkey: defaultValkey(), Worker: defaultWorker(), Flood: defaultFlood()}
}

// Error is a configuration error about one variable.
type Error struct {
	Var  string // the environment variable
	Want string // what it expects
}

func (e *Error) Error() string { return e.Var + ": " + e.Want }

// wholeNumber is the rule of a whole-number variable, as the sections
// list them (wholeNumbers): Var's Value must be Min..Max; Want says what
// it is and its range, without the value. A value out of the range
// (check) and one that is not a whole number (translate) are refused with
// the same Want, so both errors state the range.
type wholeNumber struct {
	Var      string
	Value    int
	Min, Max int
	Want     string
}

// check returns an *Error naming Var with Want and the value when Value is
// outside Min..Max, else nil.
func (w wholeNumber) check() error {
	if w.Value < w.Min || w.Value > w.Max {
		return &Error{Var: w.Var, Want: fmt.Sprintf("%s; got %d", w.Want, w.Value)}
	}
	return nil
}

// checkWholeNumbers returns the first of ws' errors (check), or nil.
func checkWholeNumbers(ws []wholeNumber) error {
	for _, w := range ws {
		if err := w.check(); err != nil {
			return err
		}
	}
	return nil
}

// wholeNumbers lists the rules of every whole-number variable of c's
// sections.
func (c Config) wholeNumbers() []wholeNumber {
	return slices.Concat(c.Valkey.wholeNumbers(), c.Rates.wholeNumbers(), c.Intake.wholeNumbers(),
		c.Worker.wholeNumbers(), c.Flood.wholeNumbers())
}

// Load reads the .env file at dotenv (if it exists; "" skips it) without
// overriding set variables, then the environment, and validates everything.
// Errors: *Error (errors.As) naming the first bad variable, or
// *DotenvError when the .env file cannot be read or parsed. No error text
// carries the bot token.
func Load(dotenv string) (Config, error) {
	if err := loadDotenvIfAny(dotenv); err != nil {
		return Config{}, err
	}
	return FromEnv(os.Environ())
}

// LoadHTTP reads HTTP_ADDR as Load does (the .env file at dotenv first,
// set variables winning; its default :8080) and validates it, reading and
// checking no other variable: the address `codemojex healthcheck` probes.
// Errors: *DotenvError, *Error (HTTP_ADDR).
func LoadHTTP(dotenv string) (HTTP, error) {
	if err := loadDotenvIfAny(dotenv); err != nil {
		return HTTP{}, err
	}
	var h HTTP
	if err := env.Parse(&h); err != nil {
		return HTTP{}, translate(err)
	}
	return h, h.Validate()
}

// loadDotenvIfAny loads the .env file at dotenv (loadDotenv) when it
// exists; "" skips it.
func loadDotenvIfAny(dotenv string) error {
	if dotenv == "" {
		return nil
	}
	if _, err := os.Stat(dotenv); err != nil {
		return nil
	}
	return loadDotenv(dotenv)
}

// FromEnv parses and validates the given environment ("KEY=value" strings).
func FromEnv(environ []string) (Config, error) {
	vars := make(map[string]string, len(environ))
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vars[k] = v
		}
	}
	if ids, ok := vars["ADMIN_IDS"]; ok && strings.TrimSpace(ids) != "" {
		// "12, 13" is how people write a list: spaces around the commas
		// are not part of an id; nor is a comma at the end ("11," after
		// deleting the last id, or a list written one id and a comma at a
		// time) a missing id. An empty id elsewhere (",11", "11,,22") may
		// be a lost one: refused.
		parts := strings.Split(ids, ",")
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
		}
		if len(parts) > 1 && parts[len(parts)-1] == "" {
			parts = parts[:len(parts)-1]
		}
		if slices.Contains(parts, "") {
			return Config{}, &Error{Var: "ADMIN_IDS", Want: adminIDsWant + "; an id is empty (a comma at the start, or two in a row)"}
		}
		vars["ADMIN_IDS"] = strings.Join(parts, ",")
	}
	c := Default()
	if err := env.ParseWithOptions(&c, env.Options{Environment: vars}); err != nil {
		return Config{}, redactTokens(vars, translate(err))
	}
	if tag, set := vars["VALKEY_KEY_TAG"]; set {
		// Set but empty is refused, not read as the default: a second
		// bot's VALKEY_KEY_TAG=$UNSET_VARIABLE would put it on the first
		// bot's keys.
		c.KeyTag = tag
	}
	if err := c.Validate(); err != nil {
		return Config{}, redactTokens(vars, err)
	}
	return c, nil
}

// tokenInRE finds a bot token's shape inside a value (tokenRE unanchored).
var tokenInRE = regexp.MustCompile(`[0-9]{1,20}:[A-Za-z0-9_-]{20,100}`)

// redactTokens removes from err's text (redactError) TELEGRAM_BOT_TOKEN and
// every token-shaped part of any variable's value: a token pasted on the
// wrong line of .env (ADMIN_IDS=123:AA…, TELEGRAM_BOT_TOKEN empty) is
// quoted by that variable's error, and must not be shown either (new-user
// trial).
func redactTokens(vars map[string]string, err error) error {
	err = redactError(redact.New(vars["TELEGRAM_BOT_TOKEN"]), err)
	seen := map[string]bool{}
	for _, v := range vars {
		for _, tok := range tokenInRE.FindAllString(v, -1) {
			if !seen[tok] {
				seen[tok] = true
				err = redactError(redact.New(tok), err)
			}
		}
	}
	return err
}

// redactError removes the token from err's text: a value quoted in an
// error (a URL, a parse error) may hold it. An *Error stays an *Error, with
// its Want redacted, so errors.As extracts nothing unsafe from it.
func redactError(r *redact.Redactor, err error) error {
	if err == nil {
		return nil
	}
	if ce, ok := err.(*Error); ok {
		return &Error{Var: ce.Var, Want: r.String(ce.Want)}
	}
	return r.Error(err)
}

// translate turns the env library's errors into *Error, naming the variable
// (from the field's env tag) and what it expects (from the field's type).
func translate(err error) error {
	var agg env.AggregateError
	if errors.As(err, &agg) && len(agg.Errors) > 0 {
		err = agg.Errors[0]
	}
	var pe env.ParseError
	if errors.As(err, &pe) {
		v := varOf(pe.Name)
		var ne *strconv.NumError
		if want := numberWant(v); want != "" && errors.As(pe.Err, &ne) {
			why := "not a whole number"
			if errors.Is(ne.Err, strconv.ErrRange) {
				why = "out of range"
			}
			return &Error{Var: v, Want: fmt.Sprintf("%s; got %q, %s", want, ne.Num, why)}
		}
		return &Error{Var: v, Want: expects(pe.Type) + "; the value set is not: " + pe.Err.Error()}
	}
	return fmt.Errorf("config: %w", err)
}

// numberWant is what variable v takes when it is a whole number (its rule's
// Want, the range included) or ADMIN_IDS (adminIDsWant); "" otherwise.
func numberWant(v string) string {
	if v == "ADMIN_IDS" {
		return adminIDsWant
	}
	for _, w := range Default().wholeNumbers() {
		if w.Var == v {
			return "a whole number, " + w.Want
		}
	}
	return ""
}

// varOf returns the environment variable of Config's field name (its env
// tag), or the name itself when there is no such field.
func varOf(field string) string {
	if f, ok := reflect.TypeFor[Config]().FieldByName(field); ok {
		if v, _, _ := strings.Cut(f.Tag.Get("env"), ","); v != "" {
			return v
		}
	}
	return field
}

// expects describes the values a field of type t takes.
func expects(t reflect.Type) string {
	isInt := func(t reflect.Type) bool {
		switch t.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			return true
		}
		return false
	}
	switch {
	case t == nil:
		return "a valid value"
	case t == reflect.TypeFor[time.Duration]():
		return "a Go duration such as 30s (a number with a unit: ms, s, m, h)"
	case isInt(t):
		return "a whole number"
	case (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) && isInt(t.Elem()):
		return "whole numbers, comma-separated (e.g. 11,22)"
	case t.Kind() == reflect.Bool:
		return "true or false"
	}
	return "a valid " + t.String()
}

// Validate checks every section (in the order of Config's fields) and the
// rules between sections; it returns the first *Error, with the token
// redacted from its text.
func (c Config) Validate() error {
	return redactError(redact.New(c.Token), c.validate())
}

func (c Config) validate() error {
	// First: a console token that is the bot token is named as such, not
	// judged by its length or entropy (a real token may pass or fail those).
	if c.ConsoleAddr != "" && c.Token != "" && c.ConsoleToken == c.Token {
		return &Error{Var: "CONSOLE_TOKEN", Want: "a token of its own, not the bot token (make one with: " + MakeConsoleToken + ")"}
	}
	for _, v := range []interface{ Validate() error }{c.Telegram, c.Valkey, c.Rates, c.Intake, c.Worker, c.HTTP, c.Flood, c.Console, c.Log} {
		if err := v.Validate(); err != nil {
			return err
		}
	}
	return nil
}
