package demo

import "syscall"

// childAttr makes the bot die with the demo, even when the demo is killed.
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }
