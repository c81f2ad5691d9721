//go:build !linux

package demo

import "syscall"

func childAttr() *syscall.SysProcAttr { return nil }
