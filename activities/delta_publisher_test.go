package activities

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/events"
)

func TestDeltaPublisherSendsAtOnceAndJoinsWhileBusy(t *testing.T) {
	var mu sync.Mutex
	var sent []string
	release := make(chan struct{})
	p := newDeltaPublisher(func(f streamFrame) (events.Cursor, error) {
		if f.N == 1 {
			<-release // the first publish is "in flight" until released
		}
		mu.Lock()
		sent = append(sent, f.Delta)
		mu.Unlock()
		return events.Cursor{Epoch: "e", Seq: int64(f.N)}, nil
	})
	p.Add("Hel")
	time.Sleep(20 * time.Millisecond) // the first delta is being published
	p.Add("lo, ")
	p.Add("wor")
	p.Add("ld")
	close(release)
	p.Close()
	assert.Equal(t, "Hello, world", strings.Join(sent, ""), "nothing lost, order kept")
	assert.Equal(t, []string{"Hel", "lo, world"}, sent, "deltas arriving during a publish are joined")
}

func TestDeltaPublisherCloseFlushesPending(t *testing.T) {
	var got strings.Builder
	p := newDeltaPublisher(func(f streamFrame) (events.Cursor, error) {
		got.WriteString(f.Delta)
		return events.Cursor{Epoch: "e"}, nil
	})
	for i := 0; i < 100; i++ {
		p.Add("x")
	}
	p.Close()
	assert.Equal(t, strings.Repeat("x", 100), got.String())
}

// replay is what a client shows after the frames it received: deltas appended, resets put in
// place of everything before.
func replay(frames []streamFrame) string {
	var text string
	for _, f := range frames {
		if f.Reset {
			text = f.Text
		} else {
			text += f.Delta
		}
	}
	return text
}

// publishSteps feeds deltas one at a time (each published before the next) to a publisher whose
// publishes answer as outcome says, and returns the frames that were published.
func publishSteps(t *testing.T, deltas []string, outcome func(n int) (string, error)) []streamFrame {
	var mu sync.Mutex
	var got []streamFrame
	sent := make(chan struct{}, 16)
	p := newDeltaPublisher(func(f streamFrame) (events.Cursor, error) {
		epoch, err := outcome(f.N)
		if err == nil {
			mu.Lock()
			got = append(got, f)
			mu.Unlock()
		}
		sent <- struct{}{}
		return events.Cursor{Epoch: epoch, Seq: int64(f.N)}, err
	})
	for _, d := range deltas {
		p.Add(d)
		select {
		case <-sent:
		case <-time.After(5 * time.Second):
			require.FailNow(t, "no publish")
		}
	}
	p.Close()
	return got
}

// A failed publish loses its delta for every client: the next frame carries the whole text.
func TestDeltaPublisherResetsAfterAFailedPublish(t *testing.T) {
	frames := publishSteps(t, []string{"One ", "two ", "three ", "four."}, func(n int) (string, error) {
		if n == 2 {
			return "", errors.New("redis: connection refused")
		}
		return "e1", nil
	})
	require.Len(t, frames, 3)
	assert.Equal(t, streamFrame{N: 3, Reset: true, Text: "One two three "}, frames[1])
	assert.Equal(t, streamFrame{N: 4, Delta: "four."}, frames[2], "after the reset, deltas again")
	assert.Equal(t, "One two three four.", replay(frames))
}

// Redis lost its data: the first frame lands in a new epoch, where clients resynchronise from a
// log without the text so far; a reset with the whole text follows at once.
func TestDeltaPublisherResetsWhenTheEpochChanges(t *testing.T) {
	frames := publishSteps(t, []string{"One ", "two ", "three."}, func(n int) (string, error) {
		if n >= 3 {
			return "e2", nil
		}
		return "e1", nil
	})
	require.Len(t, frames, 4)
	assert.Equal(t, streamFrame{N: 3, Delta: "three."}, frames[2])
	assert.Equal(t, streamFrame{N: 4, Reset: true, Text: "One two three."}, frames[3])
	// A client that synchronised in the new epoch saw frames 3 and 4 only, and shows it all.
	assert.Equal(t, "One two three.", replay(frames[2:]))
}

// The last frame failed: closing tries once more with the whole text.
func TestDeltaPublisherCloseRetriesAFailedLastFrame(t *testing.T) {
	frames := publishSteps(t, []string{"One ", "two."}, func(n int) (string, error) {
		if n == 2 {
			return "", errors.New("redis: i/o timeout")
		}
		return "e1", nil
	})
	require.Len(t, frames, 2)
	assert.Equal(t, streamFrame{N: 3, Reset: true, Text: "One two."}, frames[1])
}
