package leakcheck

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"runtime"
	"strings"
)

// errNoProc reports a system without /proc/self/fd, where sockets are not
// counted.
var errNoProc = errors.New("leakcheck: sockets are counted on Linux only")

// openSockets returns the sockets open in this process, as the targets of
// their /proc/self/fd links ("socket:[inode]").
func openSockets() (map[string]bool, error) {
	if runtime.GOOS != "linux" {
		return nil, errNoProc
	}
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return nil, fmt.Errorf("leakcheck: listing open files: %w", err)
	}
	socks := map[string]bool{}
	for _, e := range entries {
		target, err := os.Readlink("/proc/self/fd/" + e.Name())
		if err != nil {
			continue // closed since the listing, or the listing's own fd
		}
		if strings.HasPrefix(target, "socket:[") {
			socks[target] = true
		}
	}
	return socks, nil
}

// describeSockets adds the protocol, addresses and state of each socket that
// /proc/self/net knows, e.g. "socket:[123] tcp 127.0.0.1:4242 -> 127.0.0.1:53110 ESTABLISHED".
func describeSockets(socks []string) []string {
	info := map[string]string{}
	for _, proto := range []string{"tcp", "tcp6", "udp", "udp6"} {
		readNetTable(proto, info)
	}
	out := make([]string, len(socks))
	for i, s := range socks {
		inode := strings.TrimSuffix(strings.TrimPrefix(s, "socket:["), "]")
		if d, ok := info[inode]; ok {
			out[i] = s + " " + d
		} else {
			out[i] = s + " (not TCP or UDP)"
		}
	}
	return out
}

// tcpStates names the states of /proc/net/tcp.
var tcpStates = map[string]string{
	"01": "ESTABLISHED", "02": "SYN_SENT", "03": "SYN_RECV", "04": "FIN_WAIT1",
	"05": "FIN_WAIT2", "06": "TIME_WAIT", "07": "CLOSE", "08": "CLOSE_WAIT",
	"09": "LAST_ACK", "0A": "LISTEN", "0B": "CLOSING",
}

// readNetTable adds the sockets of /proc/self/net/<proto> to info, by inode.
func readNetTable(proto string, info map[string]string) {
	f, err := os.Open("/proc/self/net/" + proto)
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 {
			continue
		}
		state := fields[3]
		if name, ok := tcpStates[state]; ok && strings.HasPrefix(proto, "tcp") {
			state = name
		}
		info[fields[9]] = fmt.Sprintf("%s %s -> %s %s", proto, procAddr(fields[1]), procAddr(fields[2]), state)
	}
}

// procAddr decodes an address of /proc/net/tcp: hex IP in host (little
// endian) 32-bit words, a colon, hex port.
func procAddr(s string) string {
	ipHex, portHex, ok := strings.Cut(s, ":")
	raw, err := hex.DecodeString(ipHex)
	if !ok || err != nil || len(raw)%4 != 0 {
		return s
	}
	for i := 0; i < len(raw); i += 4 {
		raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	addr, ok := netip.AddrFromSlice(raw)
	if !ok {
		return s
	}
	var port uint64
	if _, err := fmt.Sscanf(portHex, "%X", &port); err != nil {
		return s
	}
	return netip.AddrPortFrom(addr.Unmap(), uint16(port)).String()
}
