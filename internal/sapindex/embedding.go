package sapindex

import "math"

// Embeddings are stored as int8 components of the unit vector (one byte each, v·127 rounded):
// a quarter of float32's size, and cosine similarity survives it to about two decimal places,
// which is all reranking needs. pgvector is not available on every Postgres we run on.

// EncodeEmbedding normalises v and quantises it to int8 bytes (nil for an empty or zero vector).
func EncodeEmbedding(v []float32) []byte {
	var norm float64
	for _, x := range v {
		norm += float64(x) * float64(x)
	}
	if len(v) == 0 || norm == 0 {
		return nil
	}
	norm = math.Sqrt(norm)
	out := make([]byte, len(v))
	for i, x := range v {
		q := math.Round(float64(x) / norm * 127)
		out[i] = byte(int8(max(-127, min(127, q))))
	}
	return out
}

// DecodeEmbedding turns stored bytes back into a unit vector.
func DecodeEmbedding(b []byte) []float32 {
	out := make([]float32, len(b))
	var norm float64
	for i, x := range b {
		f := float64(int8(x))
		out[i] = float32(f)
		norm += f * f
	}
	if norm == 0 {
		return out
	}
	norm = math.Sqrt(norm)
	for i := range out {
		out[i] = float32(float64(out[i]) / norm)
	}
	return out
}

// Cosine is the cosine similarity of two stored embeddings (0 when their dimensions differ,
// as after the embeddings model changed).
func Cosine(a, b []byte) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		x, y := float64(int8(a[i])), float64(int8(b[i]))
		dot += x * y
		na += x * x
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}
