package wire

import (
	"fmt"
	"net"
	neturl "net/url"
	"strings"
)

// CheckPlaintext refuses a plain-text URL to a host that is not loopback
// when opts.RequireTLS is set.
func CheckPlaintext(adapter, rawURL string, opts WSOptions) error {
	if !opts.RequireTLS {
		return nil
	}
	u, err := neturl.Parse(rawURL)
	if err != nil {
		return fmt.Errorf("adapters: %s: bad URL: %w", adapter, err)
	}
	switch strings.ToLower(u.Scheme) {
	case "wss", "https":
		return nil
	}
	if isLoopback(u.Hostname()) {
		return nil
	}
	return fmt.Errorf("adapters: %s: WSOptions.RequireTLS refuses the plain-text %s URL to %s, which is not loopback; use wss:// or https://, or unset RequireTLS", adapter, u.Scheme, u.Host)
}

// isLoopback reports whether host names this machine: localhost, or an
// address in 127.0.0.0/8 or ::1.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
