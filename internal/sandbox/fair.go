package sandbox

import (
	"context"
	"fmt"
	"sync"
)

// Owner says whose script a run is. The pool shares its sandboxes fairly among organizations,
// then among the users of an organization, first come first served within one user: one
// member's many scripts cannot make everyone else's wait for all of them.
type Owner struct {
	Org  string
	User string
	// Queued, when set, is called once if the script has to wait for a sandbox, with about
	// its place in line (1: next); Started is then called when it leaves the line. Both run on
	// the caller's goroutine.
	Queued  func(position int)
	Started func()
}

// fairQueue admits scripts to the pool's sandboxes: at most total at once, at most perOrg of
// one organization and perUser of one user. When a sandbox frees, the waiting script chosen is
// the first of the next user (round-robin) of the next organization (round-robin) that is below
// its limits, so a long line of one user does not stand in front of another's one script.
type fairQueue struct {
	total, perOrg, perUser int

	mu      sync.Mutex
	running int
	orgRun  map[string]int
	userRun map[userKey]int
	// userPeak is the most scripts each user held at once: what operators (and the attack
	// tests) read to see the per-user limit hold, independent of when events are published.
	userPeak map[userKey]int
	orgs     []*orgLine // organizations with waiting scripts, in round-robin order
	next     int        // index in orgs of the organization served next
}

type userKey struct{ org, user string }

type orgLine struct {
	org   string
	users []*userLine // users with waiting scripts, in round-robin order
	next  int
}

type userLine struct {
	user    string
	waiting []*ticket // first come, first served
}

// ticket is one waiting script; granted is closed when it may run.
type ticket struct {
	key     userKey
	granted chan struct{}
}

func newFairQueue(total, perOrg, perUser int) *fairQueue {
	return &fairQueue{total: total, perOrg: min(max(perOrg, 1), total), perUser: min(max(perUser, 1), total),
		orgRun: map[string]int{}, userRun: map[userKey]int{}, userPeak: map[userKey]int{}}
}

// acquire waits until o's script may run and returns the function that gives its place back.
func (q *fairQueue) acquire(ctx context.Context, o Owner) (release func(), err error) {
	key := userKey{o.Org, o.User}
	q.mu.Lock()
	// Whenever a place is free, every waiting script is at one of its limits (dispatch hands
	// out free places at once): a script within its limits may take a free place directly.
	if q.fits(key) {
		q.take(key)
		q.mu.Unlock()
		return q.releaser(key), nil
	}
	t := &ticket{key: key, granted: make(chan struct{})}
	q.enqueue(t)
	pos := q.position(t)
	q.mu.Unlock()

	if o.Queued != nil {
		o.Queued(pos)
	}
	select {
	case <-t.granted:
	case <-ctx.Done():
		q.mu.Lock()
		select {
		case <-t.granted: // granted meanwhile: give it back
			q.mu.Unlock()
			q.releaser(key)()
		default:
			q.remove(t)
			q.mu.Unlock()
		}
		return nil, fmt.Errorf("script not run: %v (waiting for a free sandbox)", context.Cause(ctx))
	}
	if o.Started != nil {
		o.Started()
	}
	return q.releaser(key), nil
}

func (q *fairQueue) releaser(key userKey) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			q.mu.Lock()
			defer q.mu.Unlock()
			q.running--
			if q.orgRun[key.org]--; q.orgRun[key.org] == 0 {
				delete(q.orgRun, key.org)
			}
			if q.userRun[key]--; q.userRun[key] == 0 {
				delete(q.userRun, key)
			}
			q.dispatch()
		})
	}
}

func (q *fairQueue) fits(key userKey) bool {
	return q.running < q.total && q.orgRun[key.org] < q.perOrg && q.userRun[key] < q.perUser
}

func (q *fairQueue) take(key userKey) {
	q.running++
	q.orgRun[key.org]++
	q.userRun[key]++
	q.userPeak[key] = max(q.userPeak[key], q.userRun[key])
}

// peak is the most scripts of one user that ran at once on this pool.
func (q *fairQueue) peak(org, user string) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.userPeak[userKey{org, user}]
}

// dispatch hands free places to waiting scripts, fairly.
func (q *fairQueue) dispatch() {
	for q.running < q.total {
		t := q.pick(true)
		if t == nil {
			return
		}
		q.take(t.key)
		close(t.granted)
	}
}

// pick removes and returns the next waiting script in round-robin order (only among those
// within their limits when limited), or nil.
func (q *fairQueue) pick(limited bool) *ticket {
	for i := range q.orgs {
		oi := (q.next + i) % len(q.orgs)
		ol := q.orgs[oi]
		if limited && q.orgRun[ol.org] >= q.perOrg {
			continue
		}
		for j := range ol.users {
			uj := (ol.next + j) % len(ol.users)
			ul := ol.users[uj]
			if limited && q.userRun[userKey{ol.org, ul.user}] >= q.perUser {
				continue
			}
			t := ul.waiting[0]
			ul.waiting = ul.waiting[1:]
			ol.next = uj + 1
			if len(ul.waiting) == 0 {
				ol.users = append(ol.users[:uj], ol.users[uj+1:]...)
				ol.next = uj // the user after it moved into its place
			}
			q.next = oi + 1
			if len(ol.users) == 0 {
				q.orgs = append(q.orgs[:oi], q.orgs[oi+1:]...)
				q.next = oi
			} else {
				ol.next %= len(ol.users)
			}
			if len(q.orgs) > 0 {
				q.next %= len(q.orgs)
			} else {
				q.next = 0
			}
			return t
		}
	}
	return nil
}

func (q *fairQueue) enqueue(t *ticket) {
	var ol *orgLine
	for _, o := range q.orgs {
		if o.org == t.key.org {
			ol = o
			break
		}
	}
	if ol == nil {
		// A newcomer joins the round last: everyone already waiting is served once first.
		ol = &orgLine{org: t.key.org}
		q.orgs = insertAt(q.orgs, q.next, ol)
		if len(q.orgs) > 1 {
			q.next++
		}
	}
	var ul *userLine
	for _, u := range ol.users {
		if u.user == t.key.user {
			ul = u
			break
		}
	}
	if ul == nil {
		ul = &userLine{user: t.key.user}
		ol.users = insertAt(ol.users, ol.next, ul)
		if len(ol.users) > 1 {
			ol.next++
		}
	}
	ul.waiting = append(ul.waiting, t)
}

// insertAt inserts v before index i, so it is the next one served.
func insertAt[T any](s []T, i int, v T) []T {
	i = min(i, len(s))
	s = append(s, v)
	copy(s[i+1:], s[i:])
	s[i] = v
	return s
}

// remove takes a waiting script out of line (its caller gave up).
func (q *fairQueue) remove(t *ticket) {
	for oi, ol := range q.orgs {
		if ol.org != t.key.org {
			continue
		}
		for uj, ul := range ol.users {
			if ul.user != t.key.user {
				continue
			}
			for k, w := range ul.waiting {
				if w == t {
					ul.waiting = append(ul.waiting[:k], ul.waiting[k+1:]...)
				}
			}
			if len(ul.waiting) == 0 {
				ol.users = append(ol.users[:uj], ol.users[uj+1:]...)
				if uj < ol.next {
					ol.next--
				}
				if len(ol.users) > 0 {
					ol.next %= len(ol.users)
				} else {
					ol.next = 0
				}
			}
			break
		}
		if len(ol.users) == 0 {
			q.orgs = append(q.orgs[:oi], q.orgs[oi+1:]...)
			if oi < q.next {
				q.next--
			}
			if len(q.orgs) > 0 {
				q.next %= len(q.orgs)
			} else {
				q.next = 0
			}
		}
		return
	}
}

// position is about t's place in line: where it comes in the order the waiting scripts would
// be served in if no limit held anyone back.
func (q *fairQueue) position(t *ticket) int {
	c := fairQueue{next: q.next}
	for _, ol := range q.orgs {
		o := &orgLine{org: ol.org, next: ol.next}
		for _, ul := range ol.users {
			o.users = append(o.users, &userLine{user: ul.user, waiting: append([]*ticket(nil), ul.waiting...)})
		}
		c.orgs = append(c.orgs, o)
	}
	for n := 1; ; n++ {
		p := c.pick(false)
		if p == nil || p == t {
			return n
		}
	}
}

// waiting is the number of scripts in line (for tests).
func (q *fairQueue) waiting() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := 0
	for _, ol := range q.orgs {
		for _, ul := range ol.users {
			n += len(ul.waiting)
		}
	}
	return n
}
