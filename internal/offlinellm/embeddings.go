package offlinellm

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"net/http"
	"strings"
)

// EmbeddingDimensions is the length of every vector /v1/embeddings returns.
const EmbeddingDimensions = 256

// embeddings answers with deterministic unit vectors built from hashed character trigrams, so
// texts sharing words are closer than unrelated ones (enough for search tests and demos).
func (s *Server) embeddings(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model          string          `json:"model"`
		Input          json.RawMessage `json:"input"`
		EncodingFormat string          `json:"encoding_format"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 8<<20)).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_json", "We could not parse the JSON body of your request: "+err.Error())
		return
	}
	var inputs []string
	var one string
	if err := json.Unmarshal(req.Input, &one); err == nil {
		inputs = []string{one}
	} else if err := json.Unmarshal(req.Input, &inputs); err != nil || len(inputs) == 0 {
		writeError(w, http.StatusBadRequest, "invalid_input", "'input' must be a string or a non-empty array of strings.")
		return
	}
	data := make([]any, len(inputs))
	chars := 0
	for i, in := range inputs {
		chars += len(in)
		var vec any = Embed(in)
		if req.EncodingFormat == "base64" {
			vec = base64Vector(Embed(in))
		}
		data[i] = map[string]any{"object": "embedding", "index": i, "embedding": vec}
	}
	model := req.Model
	if model == "" {
		model = ModelName
	}
	tokens := (chars + 3) / 4
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data, "model": model,
		"usage": map[string]int{"prompt_tokens": tokens, "total_tokens": tokens}})
}

// Embed is the deterministic embedding of a text.
func Embed(text string) []float32 {
	v := make([]float64, EmbeddingDimensions)
	t := []rune(" " + strings.ToLower(text) + " ")
	for i := 0; i+3 <= len(t); i++ {
		h := hash(string(t[i : i+3]))
		sign := 1.0
		if h&1 == 1 {
			sign = -1
		}
		v[int(h>>1)%EmbeddingDimensions] += sign
	}
	var norm float64
	for _, x := range v {
		norm += x * x
	}
	out := make([]float32, EmbeddingDimensions)
	if norm == 0 {
		out[0] = 1
		return out
	}
	norm = math.Sqrt(norm)
	for i, x := range v {
		out[i] = float32(x / norm)
	}
	return out
}

// base64Vector is OpenAI's encoding_format "base64": little-endian float32s.
func base64Vector(v []float32) string {
	raw := make([]byte, 0, 4*len(v))
	for _, x := range v {
		raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(x))
	}
	return base64.StdEncoding.EncodeToString(raw)
}
