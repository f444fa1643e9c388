package landscape

import (
	"bytes"
	"context"
	"strings"

	"github.com/sapagent/sapagent/internal/sapindex"
)

// comparison is two indexes merged once: every object of either side with its package and
// custom flag on each side and whether both sides have the same content. Diff counts for any
// filter (type, package, custom, a part of the name) are a pass over it in memory, so a new
// ?q= costs a few milliseconds instead of another merge of both indexes in Postgres. It is kept
// compact (names in one buffer, packages and types as indexes): about 35 bytes per object.
type comparison struct {
	names   []byte
	objects []comparedObject
	types   []string
	pkgs    []string
	all     DiffCounts // without a filter, the counts every diff shows first
}

type comparedObject struct {
	end         uint32 // the name is names[previous end:end]
	typ         int32
	left, right int32 // package index on each side; -1: the side lacks the object
	flags       uint8
}

const (
	leftCustom uint8 = 1 << iota
	rightCustom
	sameContent
)

func (c *comparison) bytes() int64 {
	n := int64(len(c.names)) + int64(len(c.objects))*20 + 128
	for _, s := range c.types {
		n += int64(len(s)) + 16
	}
	for _, s := range c.pkgs {
		n += int64(len(s)) + 16
	}
	return n
}

// compare merges the two indexes (one full join in Postgres, streamed).
func (r Reader) compare(ctx context.Context, left, right Graph) (*comparison, error) {
	c := &comparison{}
	types, pkgs := map[string]int32{}, map[string]int32{}
	intern := func(m map[string]int32, list *[]string, s string) int32 {
		i, ok := m[s]
		if !ok {
			i = int32(len(*list))
			m[s] = i
			*list = append(*list, s)
		}
		return i
	}
	err := r.Index.CompareEntries(ctx, left, right, func(e sapindex.ComparedEntry) error {
		c.names = append(c.names, e.Name...)
		o := comparedObject{end: uint32(len(c.names)), typ: intern(types, &c.types, e.Type), left: -1, right: -1}
		if e.InLeft {
			o.left = intern(pkgs, &c.pkgs, e.LeftPackage)
			if e.LeftCustom {
				o.flags |= leftCustom
			}
		}
		if e.InRight {
			o.right = intern(pkgs, &c.pkgs, e.RightPackage)
			if e.RightCustom {
				o.flags |= rightCustom
			}
		}
		if e.Same {
			o.flags |= sameContent
		}
		c.objects = append(c.objects, o)
		return nil
	})
	if err != nil {
		return nil, err
	}
	c.all = c.filtered(ObjectFilter{})
	return c, nil
}

// count counts the diff kinds under f exactly as the SQL of the diff pages sees them: each side
// is filtered on its own (its package and custom flag), then the sides are matched by key.
func (c *comparison) count(f ObjectFilter) DiffCounts {
	if f == (ObjectFilter{}) {
		return c.all
	}
	return c.filtered(f)
}

func (c *comparison) filtered(f ObjectFilter) DiffCounts {
	var out DiffCounts
	typ, pkg := int32(-1), int32(-1)
	if f.Type != "" {
		if typ = index(c.types, f.Type); typ < 0 {
			return out
		}
	}
	if f.Package != "" {
		if pkg = index(c.pkgs, f.Package); pkg < 0 {
			return out
		}
	}
	q := []byte(strings.ToUpper(f.Query))
	side := func(p int32, custom bool) bool {
		return p >= 0 && (pkg < 0 || p == pkg) && (f.Custom == nil || *f.Custom == custom)
	}
	start := uint32(0)
	for _, o := range c.objects {
		name := c.names[start:o.end]
		start = o.end
		if (typ >= 0 && o.typ != typ) || (len(q) > 0 && !bytes.Contains(name, q)) {
			continue
		}
		l, r := side(o.left, o.flags&leftCustom != 0), side(o.right, o.flags&rightCustom != 0)
		switch {
		case l && r && o.flags&sameContent != 0:
			out.Same++
		case l && r:
			out.Changed++
		case l:
			out.OnlyLeft++
		case r:
			out.OnlyRight++
		}
	}
	return out
}

func index(list []string, s string) int32 {
	for i, v := range list {
		if v == s {
			return int32(i)
		}
	}
	return -1
}
