package agent_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/arenaprof/arenaprof/export/agent"
)

// flakyUploader is a destination of your own: it fails its first attempt
// with an error marked Retryable, then accepts every profile.
type flakyUploader struct{ attempts int }

func (f *flakyUploader) Upload(ctx context.Context, u *agent.Upload) error {
	f.attempts++
	if f.attempts == 1 {
		return agent.Retryable(errors.New("503 Service Unavailable"), 10*time.Millisecond)
	}
	fmt.Printf("%s: %s profile of %s, %t\n", f, u.Profile, u.AppName, len(u.Data) > 0)
	return nil
}

// String names the destination in Stats and logs.
func (f *flakyUploader) String() string { return "flaky" }

// A destination of your own is any type with an Upload method: errors
// marked Retryable are tried again with backoff, within
// Config.MaxRetryTime; other errors fail the upload.
func ExampleUploader() {
	a, err := agent.Start(agent.Config{
		AppName:   "shop",
		Sources:   []agent.Source{agent.HeapSource()},
		Uploaders: []agent.Uploader{&flakyUploader{}},
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := a.Stop(context.Background()); err != nil {
		log.Fatal(err)
	}
	s := a.Stats().Destinations[0]
	fmt.Printf("%s: uploaded %d, retried %d\n", s.Name, s.Uploaded, s.Retried)
	// Output:
	// flaky: heap profile of shop, true
	// flaky: uploaded 1, retried 1
}
