package sap

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGuardRefusesHostileURLs(t *testing.T) {
	dev, prod := Guard{}, Guard{Production: true}
	for _, tc := range []struct {
		url    string
		guard  Guard
		reason string // "" = allowed
	}{
		{"https://connector.example.com", prod, ""},
		{"https://connector.example.com:8443/sap/ecc", prod, ""},
		{"http://127.0.0.1:8090/ECC", dev, ""},
		{"http://localhost:8090", dev, ""},
		{"http://[::1]:8090", dev, ""},
		{"http://connector.example.com", prod, "must use https"},
		{"https://127.0.0.1", prod, "loopback"},
		{"https://localhost", prod, "loopback"},
		{"https://api.localhost", prod, "loopback"},
		{"https://[::1]", prod, "loopback"},
		{"http://10.1.2.3", dev, "private"},
		{"http://172.16.0.1", dev, "private"},
		{"http://172.31.255.255", dev, "private"},
		{"http://192.168.1.10", dev, "private"},
		{"http://169.254.169.254/latest/meta-data", dev, "metadata"},
		{"http://[fd00:ec2::254]", dev, "metadata"},
		{"http://100.100.100.200", dev, "metadata"},
		{"http://169.254.10.1", dev, "link-local"},
		{"http://[fe80::1]", dev, "link-local"},
		{"http://[fc00::1]", dev, "private"},
		{"http://[::ffff:10.0.0.1]", dev, "private"},
		{"http://[::ffff:169.254.169.254]", dev, "metadata"},
		{"http://[::ffff:127.0.0.1]", prod, "https"},
		{"https://[::ffff:127.0.0.1]", prod, "loopback"},
		{"http://[64:ff9b::a9fe:a9fe]", dev, "metadata"},
		{"http://[2002:c0a8:0101::1]", dev, "private"},
		{"http://0.0.0.0", dev, "unspecified"},
		{"http://0.1.2.3", dev, "this network"},
		{"http://[::]", dev, "unspecified"},
		{"http://100.64.0.1", dev, "carrier-grade"},
		{"http://224.0.0.1", dev, "multicast"},
		{"http://255.255.255.255", dev, "broadcast"},
		{"http://2130706433", dev, "numeric form"},     // 127.0.0.1 in decimal
		{"http://2852039166", dev, "numeric form"},     // 169.254.169.254 in decimal
		{"http://0177.0.0.1", dev, "numeric form"},     // octal
		{"http://0x7f.0.0.1", dev, "numeric form"},     // hex
		{"http://0xa9fea9fe", dev, "numeric form"},     // metadata in hex
		{"http://10.1", dev, "numeric form"},           // short form
		{"http://010.0.0.1", dev, "numeric form"},      // octal 8.0.0.1
		{"ftp://connector.example.com", dev, "scheme"}, //
		{"file:///etc/passwd", dev, "scheme"},          //
		{"gopher://127.0.0.1", dev, "scheme"},          //
		{"https://user:secret@connector.example.com", prod, "credentials"},
		{"https://connector.example.com?x=1", prod, "query"},
		{"https://", prod, "no host"},
		{"https://connector.example.com:99999", prod, "port"},
		{"not a url at all", dev, "scheme"},
		// IPv6 forms that embed an IPv4 address, and IPv6 ranges outside global unicast.
		{"http://[::169.254.169.254]", dev, "metadata"},                  // IPv4-compatible
		{"http://[::10.0.0.1]", dev, "private"},                          //
		{"https://[::127.0.0.1]", prod, "loopback"},                      //
		{"http://[::127.0.0.1]", dev, "IPv4-compatible"},                 // loopback is fine in dev, the form is not
		{"http://[::8.8.8.8]", dev, "IPv4-compatible"},                   // nor with a public address inside
		{"http://[::ffff:0:a9fe:a9fe]", dev, "metadata"},                 // IPv4-translated
		{"http://[::ffff:0:10.0.0.1]", dev, "private"},                   //
		{"http://[64:ff9b:1::a9fe:a9fe]", dev, "local-use NAT64"},        //
		{"http://[64:ff9b::10.0.0.1]", dev, "private"},                   // well-known NAT64
		{"http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]", dev, "Teredo"}, //
		{"http://[2001::1]", dev, "Teredo"},                              //
		{"http://[2001:2::1]", dev, "IETF protocol assignment"},          // benchmarking
		{"http://[2001:10::1]", dev, "IETF protocol assignment"},         // ORCHID
		{"http://[fec0::1]", dev, "site-local"},                          //
		{"http://[100::1]", dev, "discard-only"},                         //
		{"http://[2001:db8::1]", dev, "documentation"},                   //
		{"http://[3fff::1]", dev, "documentation"},                       //
		{"http://192.0.2.10", dev, "documentation"},                      //
		{"http://198.51.100.7", dev, "documentation"},                    //
		{"http://203.0.113.1", dev, "documentation"},                     //
		{"http://192.88.99.1", dev, "6to4 relay"},                        //
		{"http://[2002:a9fe:a9fe::1]", dev, "metadata"},                  // 6to4
		{"http://[4000::1]", dev, "not a global unicast"},                // reserved by IETF
		{"http://[::2]", dev, "this network"},                            //
		{"http://[fe80::1%25eth0]", dev, "link-local"},                   // zone
		{"https://[2a00:1450:4001:80b::200e]", prod, ""},                 // global unicast
		{"https://[2002:808:808::1]", prod, ""},                          // 6to4 of a public address
		{"https://8.8.8.8", prod, ""},                                    //
	} {
		_, err := tc.guard.CheckURL(tc.url)
		if tc.reason == "" {
			assert.NoError(t, err, tc.url)
			continue
		}
		if assert.Error(t, err, tc.url) {
			assert.ErrorIs(t, err, ErrBlocked, tc.url)
			assert.Contains(t, err.Error(), tc.reason, tc.url)
		}
	}
}

// A host name is resolved when the connection is saved, so a name pointing into a refused
// range fails then, with the reason; a name that does not resolve passes (the dial fails later).
func TestCheckResolvedRefusesNamesOfRefusedAddresses(t *testing.T) {
	names := map[string][]netip.Addr{
		"metadata.example.com": {netip.MustParseAddr("8.8.8.8"), netip.MustParseAddr("169.254.169.254")},
		"nat64.example.com":    {netip.MustParseAddr("64:ff9b:1::a0a:1")},
		"compat.example.com":   {netip.MustParseAddr("::10.0.0.1")},
		"public.example.com":   {netip.MustParseAddr("8.8.8.8"), netip.MustParseAddr("2a00:1450:4001:80b::200e")},
	}
	g := Guard{Production: true, Lookup: func(_ context.Context, host string) ([]netip.Addr, error) {
		if a, ok := names[host]; ok {
			return a, nil
		}
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}}
	for host, reason := range map[string]string{
		"metadata.example.com": "metadata", "nat64.example.com": "local-use NAT64", "compat.example.com": "private",
	} {
		_, err := g.CheckResolved(context.Background(), "https://"+host+"/ecc")
		if assert.Error(t, err, host) {
			assert.ErrorIs(t, err, ErrBlocked, host)
			assert.Contains(t, err.Error(), host+" resolves to", host)
			assert.Contains(t, err.Error(), reason, host)
		}
	}
	for _, host := range []string{"public.example.com", "unknown.example.com"} {
		_, err := g.CheckResolved(context.Background(), "https://"+host)
		assert.NoError(t, err, host)
	}
	_, err := g.CheckResolved(context.Background(), "https://[::ffff:0:a9fe:a9fe]")
	assert.ErrorContains(t, err, "metadata", "addresses are checked without a lookup")
}

// With the system resolver: this machine's own name resolves to loopback or a private
// address, which production refuses when the URL is saved.
func TestCheckResolvedUsesTheSystemResolver(t *testing.T) {
	host, err := os.Hostname()
	require.NoError(t, err)
	addrs, err := net.LookupHost(host)
	if err != nil || len(addrs) == 0 {
		t.Skipf("%s does not resolve here", host)
	}
	if ip := netip.MustParseAddr(addrs[0]); !ip.IsLoopback() && !ip.IsPrivate() {
		t.Skipf("%s resolves to the public address %s", host, ip)
	}
	_, err = Guard{Production: true}.CheckResolved(context.Background(), "https://"+host+":8443")
	require.ErrorIs(t, err, ErrBlocked)
	assert.Contains(t, err.Error(), host+" resolves to")
}

func TestLegacyIPv4Notations(t *testing.T) {
	for in, want := range map[string]string{
		"2130706433": "127.0.0.1", "0177.0.0.1": "127.0.0.1", "0x7f.1": "127.0.0.1",
		"127.1": "127.0.0.1", "10.0.258": "10.0.1.2", "0xA9FEA9FE": "169.254.169.254",
	} {
		ip, ok := legacyIPv4(in)
		require.True(t, ok, in)
		assert.Equal(t, want, ip.String(), in)
	}
	for _, in := range []string{"example.com", "1.2.3.4.5", "256.1.1.1", "0x", "1..2", "09.1.1.1", "4294967296"} {
		_, ok := legacyIPv4(in)
		assert.False(t, ok, in)
	}
}

// A host name passes the URL check, but the address it resolves to is checked at dial time:
// this machine's own name resolves to loopback, which production refuses.
func TestGuardChecksTheResolvedAddressAtDialTime(t *testing.T) {
	host, err := os.Hostname()
	require.NoError(t, err)
	addrs, err := net.LookupHost(host)
	if err != nil || len(addrs) == 0 {
		t.Skipf("%s does not resolve here", host)
	}
	ip := netip.MustParseAddr(addrs[0])
	if !ip.IsLoopback() && !ip.IsPrivate() {
		t.Skipf("%s resolves to the public address %s", host, ip)
	}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		t.Error("the guarded client reached the server")
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "https://"))
	url := "https://" + host + ":" + port

	g := Guard{Production: true}
	_, err = g.CheckURL(url)
	require.NoError(t, err, "the name itself is fine")
	err = NewClient(g, 5*time.Second).Call(context.Background(), Target{URL: url}, EndpointSystemInfo, struct{}{}, nil)
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrBlocked), "got %v", err)
	assert.Contains(t, err.Error(), "loopback")
}

// The operator's own simulator connector may sit on a private network (the compose network);
// a user's connector URL there is still refused.
func TestTrustedGuardAllowsTheOperatorsPrivateAddress(t *testing.T) {
	for _, raw := range []string{"http://172.18.0.5:8070", "http://10.0.0.7:8070/", "http://localhost:8070"} {
		if _, err := (Guard{Production: true, Trusted: true}).CheckURL(raw); err != nil {
			t.Errorf("trusted %s: %v", raw, err)
		}
		if _, err := (Guard{Production: true}).CheckURL(raw); err == nil {
			t.Errorf("untrusted %s passed", raw)
		}
	}
}
