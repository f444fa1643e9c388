package index

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/sapagent/sapagent/api/httpx"
	"github.com/sapagent/sapagent/api/liveconn"
	"github.com/sapagent/sapagent/internal/landscape"
	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/sapindex"
	"github.com/sapagent/sapagent/internal/store"
)

// The landscape's read routes (dashboard, diff, inventory, Clean Core, docs) answer from the
// index tables through internal/landscape; /source reads from the index too and falls back to
// the live connector (liveSource, through api/liveconn). Every route needs workspace membership; a connection of another
// workspace is 404 like an unknown one.

func (s *Reads) landscape() landscape.Reader {
	return landscape.Reader{Index: sapindex.New(s.Store.Pool), Cache: s.Cache}
}

// The GETs that read over whole indexes (dashboard, diff, inventory, Clean Core) have budgets of
// their own, per user and per workspace: one member, or one workspace's members together,
// cannot keep Postgres busy for every other tenant. Defaults when the Server's fields are 0:
const (
	DefaultIndexReadsPerMinute          = 60
	DefaultIndexReadsPerWorkspaceMinute = 300
)

// ReadRoutes are the routes behind indexReadBudget (the OpenAPI document lists their 429).
var ReadRoutes = map[string]bool{
	"/api/workspaces/:id/dashboard":         true,
	"/api/workspaces/:id/dashboard/diff":    true,
	"/api/workspaces/:id/dashboard/objects": true,
	"/api/workspaces/:id/clean-core":        true,
}

// indexReadBudget is route-group middleware after Access.Member for a GET that reads over
// whole indexes: it must stay within the budgets (429 rate_limited with Retry-After otherwise).
// The workspace's budget is checked only for its members, so an outsider cannot use it up.
func (s *Reads) indexReadBudget(c *gin.Context) {
	w := httpx.WorkspaceOf(c)
	perUser, perWorkspace := s.IndexReadsPerMinute, s.IndexReadsPerWorkspaceMinute
	if perUser <= 0 {
		perUser = DefaultIndexReadsPerMinute
	}
	if perWorkspace <= 0 {
		perWorkspace = DefaultIndexReadsPerWorkspaceMinute
	}
	for _, b := range []struct {
		key string
		n   int
		per string
	}{{"ratelimit-index:user:" + httpx.User(c), perUser, "per user"}, {"ratelimit-index:workspace:" + w.ID.String(), perWorkspace, "per workspace"}} {
		res, ok := s.Limiter.CheckOf(c.Request.Context(), b.key, b.n)
		if !ok {
			continue // the limiter's Redis is unavailable: fail open, like the other budgets
		}
		if res.Allowed == 0 {
			c.Header("X-RateLimit-Limit", strconv.Itoa(b.n))
			c.Header("Retry-After", strconv.Itoa(int(math.Ceil(res.RetryAfter.Seconds()))))
			httpx.Fail(c, http.StatusTooManyRequests, "rate_limited", "too many index reads (dashboard, diff, inventory, Clean Core): at most "+
				strconv.Itoa(b.n)+" per minute "+b.per+"; retry after the Retry-After seconds")
			return
		}
	}
	c.Next()
}

// defaultTopPackages is how many packages (and components) the dashboard lists per connection.
const defaultTopPackages = 20

// landscapeFailed answers a landscape read error.
func (s *Reads) landscapeFailed(c *gin.Context, err error, what string) {
	if errors.Is(err, landscape.ErrNoIndex) {
		httpx.Fail(c, http.StatusConflict, "no_index", "the connection has no index yet: run a sync first")
		return
	}
	s.Access.StoreFailed(c, err, what)
}

// indexedConnection resolves the query parameter param to a connection of workspace ws that
// has an index: 400 when it is missing or not a UUID, 404 when the workspace has no such
// connection, 409 no_index when no sync has finished for it.
func (s *Reads) indexedConnection(c *gin.Context, ws store.Workspace, param string) (landscape.Graph, bool) {
	raw := c.Query(param)
	if raw == "" {
		httpx.BadRequest(c, "missing_field", param+" is required")
		return landscape.Graph{}, false
	}
	id, err := uuid.Parse(raw)
	if err != nil {
		httpx.BadRequest(c, "invalid_id", param+" is not a UUID")
		return landscape.Graph{}, false
	}
	g, err := s.landscape().Indexed(c.Request.Context(), ws.ID, id)
	if err != nil {
		s.landscapeFailed(c, err, "connection")
		return g, false
	}
	return g, true
}

// cursorKeys is how many strings key the landscape lists' cursors.
const cursorKeys = 2

// pageRead reads one page of a landscape list over the indexed connections its query named
// and returns what the envelope adds to data, next_cursor and has_more.
type pageRead[T any] func(ctx context.Context, graphs []landscape.Graph, cur *landscape.Cursor, limit int) (landscape.Page[T], gin.H, error)

// servePage is what every landscape list does after reading its own filters: ?cursor= and
// ?limit=, the indexed connections named by params (two must differ), one read (a failure is
// a store error about what), and the list envelope.
func servePage[T any](s *Reads, c *gin.Context, what string, params []string, read pageRead[T]) {
	_, limit, ok := httpx.PageParams(c, false)
	if !ok {
		return
	}
	cur, err := landscape.DecodeCursor(c.Query("cursor"), cursorKeys)
	if err != nil {
		httpx.BadRequest(c, "invalid_cursor", err.Error())
		return
	}
	if len(params) == 2 && c.Query(params[0]) != "" && c.Query(params[0]) == c.Query(params[1]) {
		httpx.BadRequest(c, "invalid_field", params[0]+" and "+params[1]+" must be two different connections")
		return
	}
	w := httpx.WorkspaceOf(c)
	graphs := make([]landscape.Graph, len(params))
	for i, param := range params {
		if graphs[i], ok = s.indexedConnection(c, w, param); !ok {
			return
		}
	}
	p, extra, err := read(c.Request.Context(), graphs, cur, limit)
	if err != nil {
		s.Access.StoreFailed(c, err, what)
		return
	}
	var next any
	if p.Next != nil {
		next = p.Next.Encode()
	}
	body := gin.H{"data": p.Items, "next_cursor": next, "has_more": p.Next != nil}
	for k, v := range extra {
		body[k] = v
	}
	c.JSON(http.StatusOK, body)
}

// objectFilter reads ?type=&package=&custom=&q= (names are upper case in SAP).
func objectFilter(c *gin.Context) (landscape.ObjectFilter, bool) {
	f := landscape.ObjectFilter{
		Type:    strings.ToUpper(strings.TrimSpace(c.Query("type"))),
		Package: strings.ToUpper(strings.TrimSpace(c.Query("package"))),
		Query:   strings.TrimSpace(c.Query("q")),
	}
	if len(f.Type) > 10 || len(f.Package) > 40 || len(f.Query) > 120 {
		httpx.BadRequest(c, "invalid_field", "type (10), package (40) or q (120 characters) is too long")
		return f, false
	}
	if v := c.Query("custom"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			httpx.BadRequest(c, "invalid_field", "custom must be true or false")
			return f, false
		}
		f.Custom = &b
	}
	return f, true
}

// getDashboard: analytics of every connection of the workspace; those without an index are
// listed with status "none".
func (s *Reads) getDashboard(c *gin.Context) {
	w := httpx.WorkspaceOf(c)
	top := defaultTopPackages
	if v := c.Query("top"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > landscape.MaxTop {
			httpx.BadRequest(c, "invalid_field", "top must be an integer from 1 to "+strconv.Itoa(landscape.MaxTop))
			return
		}
		top = n
	}
	ctx := c.Request.Context()
	graphs, err := s.landscape().Graphs(ctx, w.ID)
	if err != nil {
		s.Access.StoreFailed(c, err, "connections")
		return
	}
	out := make([]landscape.Dashboard, 0, len(graphs))
	for _, g := range graphs {
		d, err := s.landscape().Dashboard(ctx, g, top)
		if err != nil {
			s.Access.StoreFailed(c, err, "dashboard")
			return
		}
		out = append(out, d)
	}
	c.JSON(http.StatusOK, gin.H{"data": out})
}

// getDashboardDiff: what differs between two indexed connections of the workspace: counts of
// each kind and one page of ?kind= (only_left, only_right, changed; default changed).
func (s *Reads) getDashboardDiff(c *gin.Context) {
	kind := c.DefaultQuery("kind", landscape.DiffChanged)
	if !landscape.ValidDiffKind(kind) {
		httpx.BadRequest(c, "invalid_field", "kind must be only_left, only_right or changed")
		return
	}
	f, ok := objectFilter(c)
	if !ok {
		return
	}
	servePage(s, c, "diff", []string{"left", "right"}, func(ctx context.Context, gs []landscape.Graph, cur *landscape.Cursor, limit int) (landscape.Page[landscape.DiffItem], gin.H, error) {
		left, right := gs[0], gs[1]
		counts, err := s.landscape().DiffCounts(ctx, left, right, f)
		if err != nil {
			return landscape.Page[landscape.DiffItem]{}, nil, err
		}
		p, err := s.landscape().Diff(ctx, left, right, kind, f, cur, limit)
		return p, gin.H{"kind": kind, "counts": counts,
			"left":  gin.H{"connection_id": left.ConnectionID, "name": left.Name, "system_type": left.SystemType, "generation": left.Generation},
			"right": gin.H{"connection_id": right.ConnectionID, "name": right.Name, "system_type": right.SystemType, "generation": right.Generation}}, err
	})
}

// getDashboardObjects: the object inventory of one connection with filters.
func (s *Reads) getDashboardObjects(c *gin.Context) {
	f, ok := objectFilter(c)
	if !ok {
		return
	}
	servePage(s, c, "objects", []string{"connection_id"}, func(ctx context.Context, gs []landscape.Graph, cur *landscape.Cursor, limit int) (landscape.Page[landscape.Object], gin.H, error) {
		p, err := s.landscape().Objects(ctx, gs[0], f, cur, limit)
		return p, gin.H{"generation": gs[0].Generation}, err
	})
}

// levelParam reads ?level= (A–D, any case).
func levelParam(c *gin.Context) (string, bool) {
	l := strings.ToUpper(strings.TrimSpace(c.Query("level")))
	if l != "" && (len(l) != 1 || l < "A" || l > "D") {
		httpx.BadRequest(c, "invalid_field", "level must be A, B, C or D")
		return "", false
	}
	return l, true
}

// getCleanCore: the distribution over levels and one page of the objects with findings.
func (s *Reads) getCleanCore(c *gin.Context) {
	level, ok := levelParam(c)
	if !ok {
		return
	}
	pkg := strings.ToUpper(strings.TrimSpace(c.Query("package")))
	if len(pkg) > 40 {
		httpx.BadRequest(c, "invalid_field", "package is longer than 40 characters")
		return
	}
	servePage(s, c, "clean core", []string{"connection_id"}, func(ctx context.Context, gs []landscape.Graph, cur *landscape.Cursor, limit int) (landscape.Page[landscape.Finding], gin.H, error) {
		g := gs[0]
		summary, err := s.landscape().CleanCoreSummary(ctx, g, pkg)
		if err != nil {
			return landscape.Page[landscape.Finding]{}, nil, err
		}
		p, err := s.landscape().Findings(ctx, g, landscape.FindingFilter{Level: level, Package: pkg}, cur, limit)
		return p, gin.H{"summary": summary, "generation": g.Generation, "connection_id": g.ConnectionID, "system_type": g.SystemType}, err
	})
}

// getCleanCoreObject: one object's level with every reason and its conversion items. The
// name is a wildcard so namespaced names (/ABC/CL_X) need no escaping.
func (s *Reads) getCleanCoreObject(c *gin.Context) {
	w := httpx.WorkspaceOf(c)
	objType := strings.ToUpper(c.Param("type"))
	name := strings.ToUpper(strings.TrimPrefix(c.Param("name"), "/"))
	if name == "" || len(name) > 120 || len(objType) > 10 {
		httpx.BadRequest(c, "invalid_field", "the path needs an object type (at most 10 characters) and a name (at most 120)")
		return
	}
	g, ok := s.indexedConnection(c, w, "connection_id")
	if !ok {
		return
	}
	o, err := s.landscape().CleanCoreObject(c.Request.Context(), g, objType, name)
	if err != nil {
		s.Access.StoreFailed(c, err, "clean core analysis of "+objType+" "+name)
		return
	}
	c.JSON(http.StatusOK, o)
}

// getDocs lists the connection's generated docs (?kind=).
func (s *Reads) getDocs(c *gin.Context) {
	kind := c.Query("kind")
	if kind != "" && !landscape.ValidDocKind(kind) {
		httpx.BadRequest(c, "invalid_field", "kind must be package, object, er_diagram or business_process")
		return
	}
	servePage(s, c, "docs", []string{"connection_id"}, func(ctx context.Context, gs []landscape.Graph, cur *landscape.Cursor, limit int) (landscape.Page[landscape.Doc], gin.H, error) {
		p, err := s.landscape().Docs(ctx, gs[0], kind, cur, limit)
		return p, gin.H{"generation": gs[0].Generation}, err
	})
}

// getDoc answers one doc: raw Markdown for Accept: text/markdown or ?format=markdown, else JSON.
func (s *Reads) getDoc(c *gin.Context) {
	w := httpx.WorkspaceOf(c)
	kind, subject := c.Param("kind"), strings.TrimPrefix(c.Param("subject"), "/")
	if !landscape.ValidDocKind(kind) {
		httpx.BadRequest(c, "invalid_field", "kind must be package, object, er_diagram or business_process")
		return
	}
	if subject == "" || len(subject) > 300 {
		httpx.BadRequest(c, "invalid_field", "the path needs a subject (at most 300 characters)")
		return
	}
	format := c.Query("format")
	if format != "" && format != "markdown" && format != "json" {
		httpx.BadRequest(c, "invalid_field", "format must be markdown or json")
		return
	}
	g, ok := s.indexedConnection(c, w, "connection_id")
	if !ok {
		return
	}
	d, err := s.landscape().Doc(c.Request.Context(), g, kind, subject)
	if err != nil {
		s.Access.StoreFailed(c, err, "doc")
		return
	}
	if format == "markdown" || (format == "" && strings.Contains(c.GetHeader("Accept"), "text/markdown")) {
		c.Data(http.StatusOK, "text/markdown; charset=utf-8", []byte(d.Markdown))
		return
	}
	c.JSON(http.StatusOK, d)
}

// getSource answers ABAP source (?connection_id=&type=&name=; object_type= is the older name
// of type). A custom object's source comes from the index when it has the object, else (and
// always with live=true) from the live connector as the caller's SAP user. Source is customer
// data: it is never logged.
func (s *Reads) getSource(c *gin.Context) {
	name := strings.ToUpper(strings.TrimSpace(c.Query("name")))
	objType := strings.ToUpper(strings.TrimSpace(c.Query("type")))
	if objType == "" {
		objType = strings.ToUpper(strings.TrimSpace(c.Query("object_type")))
	}
	if name == "" || len(name) > 120 {
		httpx.BadRequest(c, "missing_field", "name is required (at most 120 characters)")
		return
	}
	if len(objType) > 4 {
		httpx.BadRequest(c, "invalid_field", "type is an SAP object type such as PROG, CLAS, FUNC, DDLS")
		return
	}
	if v := c.Query("connection_id"); v != "" {
		if _, err := uuid.Parse(v); err != nil {
			httpx.BadRequest(c, "invalid_id", "connection_id is not a UUID")
			return
		}
	}
	live := false
	if v := c.Query("live"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			httpx.BadRequest(c, "invalid_field", "live must be true or false")
			return
		}
		live = b
	}
	if !live {
		w, ok := s.Access.Workspace(c, "id", false)
		if !ok {
			return
		}
		g, ok := s.sourceConnection(c, w)
		if !ok {
			return
		}
		src, found, err := s.landscape().Source(c.Request.Context(), g, objType, name)
		if err != nil {
			s.Access.StoreFailed(c, err, "source")
			return
		}
		if found {
			if src.Lines == 0 && src.Source != "" {
				src.Lines = int64(strings.Count(strings.TrimSuffix(src.Source, "\n"), "\n") + 1)
			}
			c.JSON(http.StatusOK, gin.H{"connection_id": g.ConnectionID.String(), "object_type": src.Type, "name": src.Name,
				"source": src.Source, "lines": src.Lines, "from": "index", "generation": g.Generation, "indexed_at": g.IndexedAt()})
			return
		}
	}
	s.liveSource(c, objType, name)
}

// sourceConnection resolves ?connection_id= (or the workspace's only connection) for /source:
// 400 when it is missing among several or not a UUID, 404 when unknown here.
func (s *Reads) sourceConnection(c *gin.Context, w store.Workspace) (landscape.Graph, bool) {
	ctx := c.Request.Context()
	raw := c.Query("connection_id")
	if raw == "" {
		graphs, err := s.landscape().Graphs(ctx, w.ID)
		switch {
		case err != nil:
			s.Access.StoreFailed(c, err, "connections")
		case len(graphs) == 0:
			httpx.Fail(c, http.StatusNotFound, "not_found", "this workspace has no SAP connection")
		case len(graphs) > 1:
			httpx.BadRequest(c, "missing_field", "connection_id is required when the workspace has several connections")
		default:
			return graphs[0], true
		}
		return landscape.Graph{}, false
	}
	id, err := uuid.Parse(raw)
	if err != nil {
		httpx.BadRequest(c, "invalid_id", "connection_id is not a UUID")
		return landscape.Graph{}, false
	}
	g, err := s.landscape().Graph(ctx, w.ID, id)
	if err != nil {
		s.Access.StoreFailed(c, err, "connection")
		return g, false
	}
	return g, true
}

// liveSource answers ABAP source from the live connector, as the caller's SAP user
// (getSource above decides when the index does not serve it).
func (s *Reads) liveSource(c *gin.Context, objType, name string) {
	conn, ok := s.Live.Connection(c, c.Query("connection_id"))
	if !ok {
		return
	}
	var src sap.ABAPSource
	if err := conn.API.Call(c.Request.Context(), sap.EndpointABAPSource, sap.ABAPSourceRequest{ObjectType: objType, Name: name}, &src); err != nil {
		liveconn.Failed(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"connection_id": conn.ID, "object_type": src.ObjectType, "name": src.Name, "source": src.Source, "lines": src.Lines, "from": "live"})
}
