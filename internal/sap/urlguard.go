package sap

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Guard decides which connector URLs may be called. A connector URL is user input that makes
// the server send requests, so it must not reach the server's own network: private ranges,
// link-local addresses and cloud metadata endpoints are refused. The check runs twice: on the
// URL when it is saved or called (a clear reason for the user), and on the resolved address at
// dial time (DNS can answer differently later: rebinding).
type Guard struct {
	// Production refuses loopback and plain HTTP.
	Production bool
	// Trusted lets any address and plain HTTP through: the operator's own configuration names
	// it (SIMULATOR_CONNECTOR_URL, e.g. a connector on the compose network), never a user.
	Trusted bool
	// Lookup resolves a host name for CheckResolved (nil: the system resolver).
	Lookup func(ctx context.Context, host string) ([]netip.Addr, error)
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
	{netip.MustParsePrefix("192.0.2.0/24"), "a documentation address"},
	{netip.MustParsePrefix("192.88.99.0/24"), "a 6to4 relay anycast address"},
	{netip.MustParsePrefix("192.168.0.0/16"), "a private address"},
	{netip.MustParsePrefix("198.18.0.0/15"), "a benchmarking address"},
	{netip.MustParsePrefix("198.51.100.0/24"), "a documentation address"},
	{netip.MustParsePrefix("203.0.113.0/24"), "a documentation address"},
	{netip.MustParsePrefix("224.0.0.0/4"), "a multicast address"},
	{netip.MustParsePrefix("240.0.0.0/4"), "a reserved address"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "a local-use NAT64 address"},
	{netip.MustParsePrefix("100::/64"), "a discard-only address"},
	{netip.MustParsePrefix("2001::/32"), "a Teredo tunnel address"},
	{netip.MustParsePrefix("2001:db8::/32"), "a documentation address"},
	{netip.MustParsePrefix("2001::/23"), "an IETF protocol assignment address"},
	{netip.MustParsePrefix("3fff::/20"), "a documentation address"},
	{netip.MustParsePrefix("fc00::/7"), "a private (unique local) address"},
	{netip.MustParsePrefix("fe80::/10"), "a link-local address"},
	{netip.MustParsePrefix("fec0::/10"), "a site-local address"},
	{netip.MustParsePrefix("ff00::/8"), "a multicast address"},
}

// IPv6 forms with an IPv4 address inside, which reach (or name) that address and must pass
// the same checks: NAT64 (64:ff9b::/96), 6to4 (2002::/16), and the deprecated
// IPv4-compatible (::a.b.c.d) and IPv4-translated (::ffff:0:a.b.c.d) forms, which no
// connector needs and are refused even when the address inside is fine.
var (
	nat64      = netip.MustParsePrefix("64:ff9b::/96")
	sixto4     = netip.MustParsePrefix("2002::/16")
	compatible = netip.MustParsePrefix("::/96")
	translated = netip.MustParsePrefix("::ffff:0:0:0/96")
	// globalUnicast is the only IPv6 space a connector may be in (RFC 4291 2000::/3);
	// everything else is reserved, local or special.
	globalUnicast = netip.MustParsePrefix("2000::/3")
)

// CheckIP refuses addresses a connector must not resolve to: only global unicast addresses
// pass (and loopback outside production).
func (g Guard) CheckIP(ip netip.Addr) error {
	if g.Trusted {
		return nil
	}
	ip = ip.Unmap() // ::ffff:10.0.0.1 is 10.0.0.1
	if ip.Zone() != "" {
		ip = ip.WithZone("")
	}
	if ip.Is6() {
		b := ip.As16()
		last4 := netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
		switch {
		case ip.IsUnspecified():
			return blocked("%s is an unspecified address", ip)
		case ip.IsLoopback():
		case nat64.Contains(ip):
			return g.CheckIP(last4)
		case sixto4.Contains(ip):
			return g.CheckIP(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}))
		case compatible.Contains(ip), translated.Contains(ip):
			if err := g.CheckIP(last4); err != nil {
				return err
			}
			return blocked("%s is a deprecated IPv4-compatible or IPv4-translated form of %s; write %s", ip, last4, last4)
		}
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
	if ip.Is6() && !globalUnicast.Contains(ip) {
		return blocked("%s is not a global unicast address", ip)
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
		if g.Production && !g.Trusted {
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
		if g.Production && !g.Trusted {
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

// resolveTimeout bounds the lookup of CheckResolved: saving a connection must not hang on DNS.
const resolveTimeout = 3 * time.Second

// CheckResolved is CheckURL plus the addresses the host name resolves to now, so saving a
// name that points into a refused range fails with the reason instead of every later call
// failing at dial time. The dial-time check still runs on every call (DNS can change). A
// name that does not resolve (yet) passes: its calls fail with a network error then.
func (g Guard) CheckResolved(ctx context.Context, raw string) (*url.URL, error) {
	u, err := g.CheckURL(raw)
	if err != nil {
		return u, err
	}
	host := u.Hostname()
	if _, err := netip.ParseAddr(host); err == nil {
		return u, nil // an address: CheckURL checked it
	}
	lookup := g.Lookup
	if lookup == nil {
		lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, resolveTimeout)
	defer cancel()
	addrs, err := lookup(ctx, host)
	if err != nil {
		return u, nil
	}
	for _, a := range addrs {
		if err := g.CheckIP(a); err != nil {
			return u, fmt.Errorf("%s resolves to a refused address: %w", host, err)
		}
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
