//go:build unix

package tgapi

import (
	"crypto/tls"
	"errors"
	"net"
	"syscall"
)

// connAlive reports whether idle connection nc is still open and holds no
// unread bytes: one non-blocking peek at its socket (recv with MSG_PEEK |
// MSG_DONTWAIT), as go-sql-driver/mysql's connCheck does. An idle
// connection has nothing to read, so EAGAIN means open; end of stream (the
// server closed it), bytes (an answer nobody asked for) or an error mean
// not reusable. A connection whose socket cannot be reached is taken as
// open.
func connAlive(nc net.Conn) bool {
	if tc, ok := nc.(*tls.Conn); ok {
		nc = tc.NetConn()
	}
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	alive := false
	var buf [1]byte
	err = rc.Read(func(fd uintptr) bool {
		_, _, err := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		alive = errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EWOULDBLOCK)
		return true
	})
	return err == nil && alive
}
