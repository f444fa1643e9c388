package payloadcodec

import (
	"strings"
	"testing"

	"go.temporal.io/sdk/converter"
)

// BenchmarkPayload measures one payload's round trip (ToPayload + FromPayload, what a client
// pays per argument and result) with the SDK's default converter (baseline) and with the
// encrypting converter, for a 1 KiB and a 100 KiB value.
func BenchmarkPayload(b *testing.B) {
	c, err := New(newKey(b))
	if err != nil {
		b.Fatal(err)
	}
	for _, size := range []struct {
		name string
		n    int
	}{{"1KiB", 1 << 10}, {"100KiB", 100 << 10}} {
		v := message{Content: strings.Repeat("Kundenauftrag 4711 ", size.n/19+1)[:size.n], UserID: "u1"}
		for _, dc := range []struct {
			name string
			dc   converter.DataConverter
		}{{"plain", converter.GetDefaultDataConverter()}, {"encrypted", c.DataConverter()}} {
			b.Run(size.name+"/"+dc.name, func(b *testing.B) {
				b.SetBytes(int64(size.n))
				b.ReportAllocs()
				var out message
				for b.Loop() {
					p, err := dc.dc.ToPayload(v)
					if err != nil {
						b.Fatal(err)
					}
					if err := dc.dc.FromPayload(p, &out); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
