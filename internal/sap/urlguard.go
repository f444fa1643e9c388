package sap

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
)

// Guard decides which connector URLs may be called. A connector URL is user input that makes
// the server send requests, so it must not reach the server's own network: private ranges,
// link-local addresses and cloud metadata endpoints are refused. The check runs twice: on the
// URL when it is saved or called (a clear reason for the user), and on the resolved address at
// dial time (DNS can answer differently later: rebinding).
type Guard struct {
	// Production refuses loopback and plain HTTP.
	Production bool
}

// ErrBlocked wraps every refusal, so callers can tell a policy refusal from a network error.
var ErrBlocked = errors.New("connector URL not allowed")

func blocked(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBlocked, fmt.Sprintf(format, args...))
}

// metadata endpoints of cloud providers (AWS, Azure, GCP, Oracle: 169.254.169.254; AWS IPv6:
// fd00:ec2::254; Alibaba: 100.100.100.200).
var metadata = []netip.Addr{
	netip.MustParseAddr("169.254.169.254"),
	netip.MustParseAddr("fd00:ec2::254"),
	netip.MustParseAddr("100.100.100.200"),
}

var refusedRanges = []struct {
	prefix netip.Prefix
	why    string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "a 'this network' address"},
	{netip.MustParsePrefix("10.0.0.0/8"), "a private address"},
	{netip.MustParsePrefix("100.64.0.0/10"), "a carrier-grade NAT (shared) address"},
	{netip.MustParsePrefix("169.254.0.0/16"), "a link-local address"},
	{netip.MustParsePrefix("172.16.0.0/12"), "a private address"},
	{netip.MustParsePrefix("192.0.0.0/24"), "an IETF protocol assignment address"},
	{netip.MustParsePrefix("192.168.0.0/16"), "a private address"},
	{netip.MustParsePrefix("198.18.0.0/15"), "a benchmarking address"},
	{netip.MustParsePrefix("224.0.0.0/4"), "a multicast address"},
	{netip.MustParsePrefix("240.0.0.0/4"), "a reserved address"},
	{netip.MustParsePrefix("fc00::/7"), "a private (unique local) address"},
	{netip.MustParsePrefix("fe80::/10"), "a link-local address"},
	{netip.MustParsePrefix("ff00::/8"), "a multicast address"},
}

// Embedded IPv4: NAT64 (64:ff9b::/96) and 6to4 (2002::/16) addresses reach the IPv4 address
// inside them, which must pass the same checks.
var (
	nat64  = netip.MustParsePrefix("64:ff9b::/96")
	sixto4 = netip.MustParsePrefix("2002::/16")
)

// CheckIP refuses addresses a connector must not resolve to.
func (g Guard) CheckIP(ip netip.Addr) error {
	ip = ip.Unmap() // ::ffff:10.0.0.1 is 10.0.0.1
	if ip.Zone() != "" {
		ip = ip.WithZone("")
	}
	if ip.Is6() && nat64.Contains(ip) {
		b := ip.As16()
		return g.CheckIP(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
	}
	if ip.Is6() && sixto4.Contains(ip) {
		b := ip.As16()
		return g.CheckIP(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}))
	}
	for _, m := range metadata {
		if ip == m {
			return blocked("%s is a cloud metadata endpoint", ip)
		}
	}
	if ip.IsUnspecified() {
		return blocked("%s is an unspecified address", ip)
	}
	if ip == netip.MustParseAddr("255.255.255.255") {
		return blocked("%s is the broadcast address", ip)
	}
	if ip.IsLoopback() {
		if g.Production {
			return blocked("%s is a loopback address (allowed only outside production)", ip)
		}
		return nil
	}
	for _, r := range refusedRanges {
		if r.prefix.Contains(ip) {
			return blocked("%s is %s", ip, r.why)
		}
	}
	return nil
}

// CheckURL validates a connector URL as written: scheme, no credentials in it, and — when the
// host is an address in any notation — the address rules. Host names are checked again on
// their resolved addresses at dial time.
func (g Guard) CheckURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, blocked("not a valid URL")
	}
	switch u.Scheme {
	case "https":
	case "http":
		if g.Production {
			return nil, blocked("production connections must use https")
		}
	default:
		return nil, blocked("the scheme must be https (or http outside production), not %q", u.Scheme)
	}
	if u.User != nil {
		return nil, blocked("credentials do not belong in the URL; store them as connection secrets")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, blocked("a connector URL has no query or fragment")
	}
	host := u.Hostname()
	if host == "" {
		return nil, blocked("the URL has no host")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, blocked("invalid port %q", p)
		}
	}
	lower := strings.ToLower(strings.TrimSuffix(host, "."))
	if lower == "localhost" || strings.HasSuffix(lower, ".localhost") {
		if g.Production {
			return nil, blocked("%s is a loopback name (allowed only outside production)", host)
		}
		return u, nil
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return u, g.CheckIP(ip)
	}
	if ip, ok := legacyIPv4(host); ok {
		// 2130706433, 0177.0.0.1, 0x7f.1: inet_aton forms some resolvers accept. Refuse them
		// outright: nobody writes a connector address this way except to slip past a filter.
		return nil, blocked("%q is the address %s written in a numeric form; write hosts as names or dotted-decimal addresses", host, ip)
	}
	if strings.ContainsAny(host, "%") {
		return nil, blocked("invalid host %q", host)
	}
	return u, nil
}

// legacyIPv4 parses the inet_aton notations: one to four parts, each decimal, octal (leading
// 0) or hexadecimal (0x), the last part filling the remaining bytes.
func legacyIPv4(host string) (netip.Addr, bool) {
	parts := strings.Split(host, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	vals := make([]uint64, len(parts))
	for i, p := range parts {
		if p == "" {
			return netip.Addr{}, false
		}
		base, digits := 10, p
		switch {
		case strings.HasPrefix(strings.ToLower(p), "0x"):
			base, digits = 16, p[2:]
		case len(p) > 1 && p[0] == '0':
			base, digits = 8, p[1:]
		}
		if digits == "" && base == 16 {
			return netip.Addr{}, false
		}
		v := uint64(0)
		if digits != "" {
			n, err := strconv.ParseUint(digits, base, 32)
			if err != nil {
				return netip.Addr{}, false
			}
			v = n
		}
		vals[i] = v
	}
	var out uint64
	for i := 0; i < len(vals)-1; i++ {
		if vals[i] > 255 {
			return netip.Addr{}, false
		}
		out = out<<8 | vals[i]
	}
	restBytes := 4 - (len(vals) - 1)
	last := vals[len(vals)-1]
	if last >= 1<<(8*restBytes) {
		return netip.Addr{}, false
	}
	out = out<<(8*restBytes) | last
	return netip.AddrFrom4([4]byte{byte(out >> 24), byte(out >> 16), byte(out >> 8), byte(out)}), true
}

// Control is a net.Dialer Control function: it runs after DNS resolution with the address
// actually being dialled, so a name that resolves to a refused address is stopped here.
func (g Guard) Control(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return blocked("cannot check address %q", address)
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return blocked("cannot check address %q", address)
	}
	return g.CheckIP(ip)
}
