package script

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"

	"go.starlark.net/starlark"
)

// maxDepth bounds the nesting of values crossing the sandbox boundary (it also stops cycles,
// such as a list that contains itself).
const maxDepth = 64

// errTooLarge reports that a value exceeded its size budget.
var errTooLarge = errors.New("value too large")

// toGo converts a Starlark value to a JSON-like Go value: None → nil, bool, int → int64 (or
// json.Number when it does not fit), float → float64, str → string, list/tuple/set → []any,
// dict (string keys) → map[string]any. budget is decremented by the approximate JSON size of
// the value; the conversion fails with errTooLarge when it runs out, which also bounds the work
// done on huge or exponentially shared structures.
func toGo(v starlark.Value, budget *int) (any, error) {
	return toGoDepth(v, budget, 0)
}

func toGoDepth(v starlark.Value, budget *int, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("value nested more than %d levels deep (or containing itself)", maxDepth)
	}
	spend := func(n int) error {
		*budget -= n
		if *budget < 0 {
			return errTooLarge
		}
		return nil
	}
	switch v := v.(type) {
	case starlark.NoneType:
		return nil, spend(4)
	case starlark.Bool:
		return bool(v), spend(5)
	case starlark.Int:
		if i, ok := v.Int64(); ok {
			return i, spend(len(strconv.FormatInt(i, 10)))
		}
		s := v.String()
		return json.Number(s), spend(len(s))
	case starlark.Float:
		f := float64(v)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("the float %s cannot be represented in JSON", v.String())
		}
		return f, spend(len(strconv.FormatFloat(f, 'g', -1, 64)))
	case starlark.String:
		return string(v), spend(len(v) + 2)
	case starlark.Bytes:
		return nil, errors.New("bytes cannot leave the script; use a str")
	case *starlark.List:
		return sequenceToGo(v, v.Len(), budget, depth, spend)
	case starlark.Tuple:
		return sequenceToGo(v, v.Len(), budget, depth, spend)
	case *starlark.Set:
		return sequenceToGo(v, v.Len(), budget, depth, spend)
	case *starlark.Dict:
		if err := spend(2); err != nil {
			return nil, err
		}
		out := make(map[string]any, v.Len())
		for _, item := range v.Items() {
			k, ok := item[0].(starlark.String)
			if !ok {
				return nil, fmt.Errorf("dict keys must be strings, got %s key %s", item[0].Type(), shorten(item[0].String()))
			}
			if err := spend(len(k) + 4); err != nil {
				return nil, err
			}
			x, err := toGoDepth(item[1], budget, depth+1)
			if err != nil {
				return nil, err
			}
			out[string(k)] = x
		}
		return out, nil
	}
	return nil, fmt.Errorf("a %s cannot leave the script (use None, bool, int, float, str, list, tuple or dict with str keys)", v.Type())
}

func sequenceToGo(v starlark.Iterable, n int, budget *int, depth int, spend func(int) error) (any, error) {
	if err := spend(2 + n); err != nil {
		return nil, err
	}
	out := make([]any, 0, n)
	iter := v.Iterate()
	defer iter.Done()
	var e starlark.Value
	for iter.Next(&e) {
		x, err := toGoDepth(e, budget, depth+1)
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, nil
}

func shorten(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// toStarlark converts a helper's JSON-like result to a Starlark value: map[string]any → dict
// (keys sorted, so iteration order is deterministic), []any → list, json.Number → int or float,
// integral float64 (what encoding/json produces for every number) → int. Other Go values go
// through encoding/json first.
func toStarlark(v any, depth int) (starlark.Value, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("value nested more than %d levels deep", maxDepth)
	}
	switch v := v.(type) {
	case nil:
		return starlark.None, nil
	case bool:
		return starlark.Bool(v), nil
	case string:
		return starlark.String(v), nil
	case int:
		return starlark.MakeInt(v), nil
	case int64:
		return starlark.MakeInt64(v), nil
	case int32:
		return starlark.MakeInt64(int64(v)), nil
	case uint64:
		return starlark.MakeUint64(v), nil
	case float32:
		return floatToStarlark(float64(v)), nil
	case float64:
		return floatToStarlark(v), nil
	case json.Number:
		return numberToStarlark(v)
	case []any:
		out := make([]starlark.Value, len(v))
		for i, e := range v {
			x, err := toStarlark(e, depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return starlark.NewList(out), nil
	case []string:
		out := make([]starlark.Value, len(v))
		for i, e := range v {
			out[i] = starlark.String(e)
		}
		return starlark.NewList(out), nil
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		d := starlark.NewDict(len(v))
		for _, k := range keys {
			x, err := toStarlark(v[k], depth+1)
			if err != nil {
				return nil, err
			}
			if err := d.SetKey(starlark.String(k), x); err != nil {
				return nil, err
			}
		}
		return d, nil
	}
	// Anything else (structs, typed slices and maps) goes through encoding/json.
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	var generic any
	if err := dec.Decode(&generic); err != nil {
		return nil, err
	}
	return toStarlark(generic, depth)
}

func floatToStarlark(f float64) starlark.Value {
	if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return starlark.MakeInt64(int64(f))
	}
	return starlark.Float(f)
}

func numberToStarlark(n json.Number) (starlark.Value, error) {
	if i, err := n.Int64(); err == nil {
		return starlark.MakeInt64(i), nil
	}
	if !strings.ContainsAny(string(n), ".eE") {
		if b, ok := new(big.Int).SetString(string(n), 10); ok {
			return starlark.MakeBigInt(b), nil
		}
	}
	f, err := n.Float64()
	if err != nil {
		return nil, fmt.Errorf("invalid number %q", string(n))
	}
	return starlark.Float(f), nil
}
