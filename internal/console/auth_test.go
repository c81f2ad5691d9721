package console

import (
	"net/http"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestClientAddrBelievesForwardedForOnlyFromTrustedProxies: a sign-in is
// counted under its peer's address, unless the peer is a trusted proxy:
// then under the rightmost X-Forwarded-For entry that is not a trusted
// proxy (what the nearest proxy saw), so entries a client wrote itself
// further left are never believed.
func TestClientAddrBelievesForwardedForOnlyFromTrustedProxies(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	for _, tc := range []struct {
		name, remote string
		xff          []string // X-Forwarded-For headers
		want         string
	}{
		{"no proxy, no header", "203.0.113.5:4242", nil, "203.0.113.5"},
		{"an untrusted peer's header is ignored", "203.0.113.5:4242", []string{"198.51.100.1"}, "203.0.113.5"},
		{"a trusted proxy names the client", "10.0.0.2:4242", []string{"198.51.100.1"}, "198.51.100.1"},
		{"the rightmost untrusted entry, not a spoofed one left of it", "10.0.0.2:4242", []string{"192.0.2.66, 198.51.100.1"}, "198.51.100.1"},
		{"through two trusted proxies", "10.0.0.2:4242", []string{"198.51.100.1, 10.9.9.9"}, "198.51.100.1"},
		{"the header given twice is one list", "10.0.0.2:4242", []string{"192.0.2.66", "198.51.100.1"}, "198.51.100.1"},
		{"an entry with a port", "10.0.0.2:4242", []string{"198.51.100.1:5555"}, "198.51.100.1"},
		{"IPv6 behind an IPv6 proxy", "[::1]:4242", []string{"2001:db8::7"}, "2001:db8::7"},
		{"an IPv4-mapped peer is its IPv4 address", "[::ffff:10.0.0.2]:4242", []string{"198.51.100.1"}, "198.51.100.1"},
		{"a trusted proxy without the header", "10.0.0.2:4242", nil, "10.0.0.2"},
		{"every entry trusted: the leftmost", "10.0.0.2:4242", []string{"10.1.1.1, 10.2.2.2"}, "10.1.1.1"},
		{"garbage stops the walk at the last proxy", "10.0.0.2:4242", []string{"198.51.100.1, not-an-address"}, "10.0.0.2"},
		{"garbage left of the client is not reached", "10.0.0.2:4242", []string{"not-an-address, 198.51.100.1"}, "198.51.100.1"},
		{"a remote address that does not parse", "@", nil, "@"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &http.Request{RemoteAddr: tc.remote, Header: http.Header{}}
			for _, v := range tc.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			require.Equal(t, tc.want, clientAddr(r, trusted))
			if peer, err := netip.ParseAddrPort(tc.remote); err == nil {
				require.Equal(t, peer.Addr().Unmap().String(), clientAddr(r, nil), "nothing trusted: the peer")
			}
		})
	}
}
