package events

import (
	"context"
	"sync"

	"github.com/redis/go-redis/v9"
)

// Publishes are group-committed: callers queue their script call and a few flushers send
// whatever is queued as one Redis pipeline. Alone, a publish goes out at once (a pipeline of
// one); when many activities publish at the same moment, they share round trips instead of
// queueing for pool connections, which keeps both throughput and the latency tail close to
// a bare PUBLISH.
const (
	flushers      = 4   // pipelines in flight at once (each holds one pooled connection)
	maxBatch      = 128 // script calls per pipeline
	queueCapacity = 4096
)

type publishCall struct {
	keys []string
	args []any
	seq  int64
	err  error
	done chan struct{}
}

type pipeline struct {
	rdb   *redis.Client
	calls chan *publishCall
	start sync.Once
	stop  chan struct{}
	wg    sync.WaitGroup
}

func newPipeline(rdb *redis.Client) *pipeline {
	return &pipeline{rdb: rdb, calls: make(chan *publishCall, queueCapacity), stop: make(chan struct{})}
}

// run queues one script call and waits for its result or ctx.
func (p *pipeline) run(ctx context.Context, keys []string, args ...any) (int64, error) {
	p.start.Do(func() {
		for i := 0; i < flushers; i++ {
			p.wg.Add(1)
			go p.flushLoop()
		}
	})
	c := &publishCall{keys: keys, args: args, done: make(chan struct{})}
	select {
	case p.calls <- c:
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-p.stop:
		return 0, redis.ErrClosed
	}
	select {
	case <-c.done:
		return c.seq, c.err
	case <-p.stop:
		select {
		case <-c.done:
			return c.seq, c.err
		default:
			return 0, redis.ErrClosed
		}
	case <-ctx.Done():
		// The event may still be published; its ID makes a retry harmless.
		return 0, ctx.Err()
	}
}

func (p *pipeline) flushLoop() {
	defer p.wg.Done()
	batch := make([]*publishCall, 0, maxBatch)
	for {
		select {
		case c := <-p.calls:
			batch = append(batch[:0], c)
		case <-p.stop:
			return
		}
	drain:
		for len(batch) < maxBatch {
			select {
			case c := <-p.calls:
				batch = append(batch, c)
			default:
				break drain
			}
		}
		p.exec(batch)
	}
}

func (p *pipeline) exec(batch []*publishCall) {
	ctx := context.Background() // the client's read/write timeouts bound the round trip
	cmds := make([]*redis.Cmd, len(batch))
	_, _ = p.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for i, c := range batch {
			cmds[i] = publishScript.EvalSha(ctx, pipe, c.keys, c.args...)
		}
		return nil
	})
	// After a Redis restart or SCRIPT FLUSH the script is unknown: send it in full once.
	var missing []int
	for i, cmd := range cmds {
		if redis.HasErrorPrefix(cmd.Err(), "NOSCRIPT") {
			missing = append(missing, i)
		}
	}
	if len(missing) > 0 {
		_, _ = p.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
			for _, i := range missing {
				cmds[i] = publishScript.Eval(ctx, pipe, batch[i].keys, batch[i].args...)
			}
			return nil
		})
	}
	for i, c := range batch {
		c.seq, c.err = cmds[i].Int64()
		close(c.done)
	}
}

// close stops the flushers; queued calls not yet sent fail with redis.ErrClosed.
func (p *pipeline) close() {
	select {
	case <-p.stop:
		return
	default:
	}
	close(p.stop)
	p.wg.Wait()
	for {
		select {
		case c := <-p.calls:
			c.err = redis.ErrClosed
			close(c.done)
		default:
			return
		}
	}
}
