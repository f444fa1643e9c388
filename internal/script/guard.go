package script

import (
	"fmt"
	"math/bits"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// Starlark checks the heap only between steps, and one step of `+` or `*` can allocate
// gigabytes (`[0] * (1 << 28)` is 4 GiB) or hold the CPU for seconds (a product of two huge
// ints). Before running a script its + and * (also += and *=) are rewritten into calls of
// guard builtins that check the size of the result first and then do what the operator does.
// The guards' names contain '$', which no script can spell.
const (
	// maxStringBytes bounds a string (or bytes) built by one + or *.
	maxStringBytes = 64 << 20
	// maxListElems bounds a list or tuple built by one + or * (64 MiB of element slots).
	maxListElems = 4 << 20
	// maxIntBits bounds the product of two ints (a million bits multiply in milliseconds).
	maxIntBits = 1 << 20
)

const (
	guardAdd   = "$add"   // x + y
	guardMul   = "$mul"   // x * y
	guardCheck = "$check" // x op= y: checks, then returns y for the original in-place operator
)

var guards = starlark.StringDict{
	guardAdd: starlark.NewBuiltin(guardAdd, func(_ *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
		if err := checkSize(syntax.PLUS, args[0], args[1]); err != nil {
			return nil, err
		}
		return starlark.Binary(syntax.PLUS, args[0], args[1])
	}),
	guardMul: starlark.NewBuiltin(guardMul, func(_ *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
		if err := checkSize(syntax.STAR, args[0], args[1]); err != nil {
			return nil, err
		}
		return starlark.Binary(syntax.STAR, args[0], args[1])
	}),
	guardCheck: starlark.NewBuiltin(guardCheck, func(_ *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
		op := syntax.PLUS
		if args[0] == starlark.String("*") {
			op = syntax.STAR
		}
		if err := checkSize(op, args[1], args[2]); err != nil {
			return nil, err
		}
		return args[2], nil
	}),
}

// checkSize fails when x op y would build a value over the limits above. Operands of other
// types pass: starlark.Binary then reports its own error.
func checkSize(op syntax.Token, x, y starlark.Value) error {
	if op == syntax.PLUS {
		switch x := x.(type) {
		case starlark.String:
			if y, ok := y.(starlark.String); ok {
				return bytesOver(len(x) + len(y))
			}
		case starlark.Bytes:
			if y, ok := y.(starlark.Bytes); ok {
				return bytesOver(len(x) + len(y))
			}
		case *starlark.List:
			// list += any iterable extends the list in place.
			if n := starlark.Len(y); n > 0 {
				return elemsOver(x.Len() + n)
			}
		case starlark.Tuple:
			if y, ok := y.(starlark.Tuple); ok {
				return elemsOver(len(x) + len(y))
			}
		}
		return nil
	}
	if xi, ok := x.(starlark.Int); ok {
		if yi, ok := y.(starlark.Int); ok {
			if n := bitLen(xi) + bitLen(yi); n > maxIntBits {
				return fmt.Errorf("multiplying these ints would give a number of about %d bits, more than the sandbox's %d-bit limit", n, maxIntBits)
			}
			return nil
		}
		x, y = y, x // n * seq
	}
	n, ok := y.(starlark.Int)
	if !ok {
		return nil
	}
	count, ok := n.Int64()
	if !ok || count <= 0 || count > 1<<31 {
		return nil // starlark.Binary reports a count too large for a repeat
	}
	switch x := x.(type) {
	case starlark.String:
		return bytesOver(mulSat(len(x), count))
	case starlark.Bytes:
		return bytesOver(mulSat(len(x), count))
	case *starlark.List:
		return elemsOver(mulSat(x.Len(), count))
	case starlark.Tuple:
		return elemsOver(mulSat(len(x), count))
	}
	return nil
}

func bytesOver(n int) error {
	if n > maxStringBytes {
		return fmt.Errorf("this would build a string of %d MiB, more than the sandbox's %d MiB limit for one value; work on smaller pieces", n>>20, maxStringBytes>>20)
	}
	return nil
}

func elemsOver(n int) error {
	if n > maxListElems {
		return fmt.Errorf("this would build a list of %d elements, more than the sandbox's limit of %d for one value; work on smaller pieces", n, maxListElems)
	}
	return nil
}

// mulSat multiplies without overflowing (the result only needs to exceed the limits).
func mulSat(n int, count int64) int {
	hi, lo := bits.Mul64(uint64(n), uint64(count))
	if hi != 0 || lo > 1<<62 {
		return 1 << 62
	}
	return int(lo)
}

func bitLen(i starlark.Int) int {
	if v, ok := i.Int64(); ok {
		if v < 0 {
			v = -v
		}
		return bits.Len64(uint64(v))
	}
	return i.BigInt().BitLen()
}

// guard rewrites a parsed script so that its + and * go through the guards; temps counts the
// temporaries introduced for `a[i] op= y`.
type guard struct{ temps int }

func (g *guard) stmts(list []syntax.Stmt) []syntax.Stmt {
	out := make([]syntax.Stmt, 0, len(list))
	for _, s := range list {
		out = append(out, g.stmt(s)...)
	}
	return out
}

func (g *guard) stmt(s syntax.Stmt) []syntax.Stmt {
	switch s := s.(type) {
	case *syntax.AssignStmt:
		s.RHS = g.expr(s.RHS)
		if s.Op != syntax.PLUS_EQ && s.Op != syntax.STAR_EQ {
			g.target(s.LHS)
			return []syntax.Stmt{s}
		}
		return g.augmented(s)
	case *syntax.DefStmt:
		g.params(s.Params)
		s.Body = g.stmts(s.Body)
	case *syntax.ExprStmt:
		s.X = g.expr(s.X)
	case *syntax.ForStmt:
		g.target(s.Vars)
		s.X = g.expr(s.X)
		s.Body = g.stmts(s.Body)
	case *syntax.WhileStmt:
		s.Cond = g.expr(s.Cond)
		s.Body = g.stmts(s.Body)
	case *syntax.IfStmt:
		s.Cond = g.expr(s.Cond)
		s.True = g.stmts(s.True)
		s.False = g.stmts(s.False)
	case *syntax.ReturnStmt:
		if s.Result != nil {
			s.Result = g.expr(s.Result)
		}
	}
	return []syntax.Stmt{s}
}

// augmented rewrites `x op= y` into `x op= $check(op, x, y)`, keeping Starlark's in-place
// semantics (list += extends the list). An index target whose operands are not plain names or
// literals is evaluated once into temporaries first, as Starlark does.
func (g *guard) augmented(s *syntax.AssignStmt) []syntax.Stmt {
	op := "+"
	if s.Op == syntax.STAR_EQ {
		op = "*"
	}
	var pre []syntax.Stmt
	lhs := unparen(s.LHS)
	switch l := lhs.(type) {
	case *syntax.Ident:
	case *syntax.IndexExpr:
		l.X, l.Y = g.expr(l.X), g.expr(l.Y)
		if !simple(l.X) || !simple(l.Y) {
			tx, ty := g.temp(l.X), g.temp(l.Y)
			pre = append(pre,
				&syntax.AssignStmt{OpPos: s.OpPos, Op: syntax.EQ, LHS: tx, RHS: l.X},
				&syntax.AssignStmt{OpPos: s.OpPos, Op: syntax.EQ, LHS: ty, RHS: l.Y})
			l = &syntax.IndexExpr{X: ident(tx), Lbrack: l.Lbrack, Y: ident(ty), Rbrack: l.Rbrack}
			s.LHS = l
		}
		lhs = l
	default:
		return []syntax.Stmt{s} // x.f op= y: no script value has settable fields
	}
	s.RHS = call(guardCheck, s.OpPos, &syntax.Literal{Token: syntax.STRING, TokenPos: s.OpPos, Raw: `"` + op + `"`, Value: op}, copyTarget(lhs), s.RHS)
	return append(pre, s)
}

// target rewrites the expressions inside an assignment target (a[i + 1] = v); the target
// itself stays, so an invalid one is reported by the resolver as written.
func (g *guard) target(e syntax.Expr) {
	switch e := e.(type) {
	case *syntax.IndexExpr:
		e.X, e.Y = g.expr(e.X), g.expr(e.Y)
	case *syntax.DotExpr:
		e.X = g.expr(e.X)
	case *syntax.ParenExpr:
		g.target(e.X)
	case *syntax.TupleExpr:
		for _, x := range e.List {
			g.target(x)
		}
	case *syntax.ListExpr:
		for _, x := range e.List {
			g.target(x)
		}
	}
}

func (g *guard) temp(e syntax.Expr) *syntax.Ident {
	g.temps++
	start, _ := e.Span()
	return &syntax.Ident{NamePos: start, Name: fmt.Sprintf("$t%d", g.temps)}
}

func (g *guard) params(ps []syntax.Expr) {
	for i, p := range ps {
		if b, ok := p.(*syntax.BinaryExpr); ok && b.Op == syntax.EQ { // name=default
			b.Y = g.expr(b.Y)
			ps[i] = b
		}
	}
}

func (g *guard) exprs(list []syntax.Expr) {
	for i := range list {
		list[i] = g.expr(list[i])
	}
}

func (g *guard) expr(e syntax.Expr) syntax.Expr {
	switch e := e.(type) {
	case *syntax.BinaryExpr:
		e.X, e.Y = g.expr(e.X), g.expr(e.Y)
		switch e.Op {
		case syntax.PLUS:
			return call(guardAdd, e.OpPos, e.X, e.Y)
		case syntax.STAR:
			return call(guardMul, e.OpPos, e.X, e.Y)
		}
	case *syntax.CallExpr:
		e.Fn = g.expr(e.Fn)
		g.exprs(e.Args)
	case *syntax.Comprehension:
		e.Body = g.expr(e.Body)
		for _, c := range e.Clauses {
			switch c := c.(type) {
			case *syntax.ForClause:
				g.target(c.Vars)
				c.X = g.expr(c.X)
			case *syntax.IfClause:
				c.Cond = g.expr(c.Cond)
			}
		}
	case *syntax.CondExpr:
		e.Cond, e.True, e.False = g.expr(e.Cond), g.expr(e.True), g.expr(e.False)
	case *syntax.DictEntry:
		e.Key, e.Value = g.expr(e.Key), g.expr(e.Value)
	case *syntax.DictExpr:
		g.exprs(e.List)
	case *syntax.DotExpr:
		e.X = g.expr(e.X)
	case *syntax.IndexExpr:
		e.X, e.Y = g.expr(e.X), g.expr(e.Y)
	case *syntax.LambdaExpr:
		g.params(e.Params)
		e.Body = g.expr(e.Body)
	case *syntax.ListExpr:
		g.exprs(e.List)
	case *syntax.ParenExpr:
		e.X = g.expr(e.X)
	case *syntax.SliceExpr:
		e.X = g.expr(e.X)
		for _, p := range []*syntax.Expr{&e.Lo, &e.Hi, &e.Step} {
			if *p != nil {
				*p = g.expr(*p)
			}
		}
	case *syntax.TupleExpr:
		g.exprs(e.List)
	case *syntax.UnaryExpr:
		if e.X != nil {
			e.X = g.expr(e.X)
		}
	}
	return e
}

// call builds fn(args...) positioned at the operator, so errors name the operator's line.
func call(fn string, pos syntax.Position, args ...syntax.Expr) *syntax.CallExpr {
	return &syntax.CallExpr{Fn: &syntax.Ident{NamePos: pos, Name: fn}, Lparen: pos, Args: args, Rparen: pos}
}

func unparen(e syntax.Expr) syntax.Expr {
	for {
		p, ok := e.(*syntax.ParenExpr)
		if !ok {
			return e
		}
		e = p.X
	}
}

// simple reports whether evaluating e twice is the same as once (a name or a literal).
func simple(e syntax.Expr) bool {
	switch e.(type) {
	case *syntax.Ident, *syntax.Literal:
		return true
	}
	return false
}

// copyTarget copies an assignment target for reading (the resolver binds each Ident node once).
func copyTarget(e syntax.Expr) syntax.Expr {
	switch e := e.(type) {
	case *syntax.Ident:
		return ident(e)
	case *syntax.IndexExpr:
		return &syntax.IndexExpr{X: copyTarget(e.X), Lbrack: e.Lbrack, Y: copyTarget(e.Y), Rbrack: e.Rbrack}
	case *syntax.Literal:
		c := *e
		return &c
	}
	return e
}

func ident(id *syntax.Ident) *syntax.Ident {
	return &syntax.Ident{NamePos: id.NamePos, Name: id.Name}
}
