package demo

import "os"

// IsTerminal reports whether f is a character device (a terminal) and TERM
// does not say the terminal cannot move the cursor.
func IsTerminal(f *os.File) bool {
	if t := os.Getenv("TERM"); t == "dumb" {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
