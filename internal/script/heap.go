package script

import "runtime/metrics"

const heapMetric = "/memory/classes/heap/objects:bytes"

// heapBytes is the memory occupied by live and not-yet-swept heap objects of the whole process
// (cheap to read: runtime/metrics does not stop the world).
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: heapMetric}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
