package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/orchd/orchd/internal/events"
)

// eventsConfig are the instance event listeners of orchd serve.
type eventsConfig struct {
	file    string
	webhook string
	budget  time.Duration
	queue   int
	batch   int
	// timeline is how many recent events the timeline keeps across
	// instances (0: none, and no live stream).
	timeline int
}

func eventFlags(fs *flag.FlagSet, c *eventsConfig) {
	fs.StringVar(&c.file, "events-file", "", "append instance events to this file, one JSON object a line (off when empty)")
	fs.StringVar(&c.webhook, "events-webhook", "", "POST instance events, a JSON array a batch, to this URL (off when empty)")
	fs.DurationVar(&c.budget, "events-budget", 2*time.Second, "longest one delivery to a listener may take; a listener that overruns it is cut off")
	fs.IntVar(&c.queue, "events-queue", 4096, "events queued per listener; when full, events are dropped (and counted)")
	fs.IntVar(&c.batch, "events-batch", 256, "most events one delivery carries")
	fs.IntVar(&c.timeline, "timeline", 0, "keep the last events of instances, this many in all (at most 200 per instance), for the management API and the console's live stream (0: off)")
}

// timelinePerInstance is the most events the timeline keeps of one
// instance.
const timelinePerInstance = 200

// openEvents starts the configured listeners: nil when there are none
// (the runtime then builds no event at all). stop delivers what is queued
// (within the budget) and closes them. tl is the timeline listener
// (--timeline), nil when off.
func openEvents(c *eventsConfig, log *slog.Logger, reg prometheus.Registerer) (d *events.Dispatcher, tl *events.Timeline, stop func(), err error) {
	var ls []events.Listener
	var file *events.File
	if c.file != "" {
		if file, err = events.OpenFile(c.file); err != nil {
			return nil, nil, nil, fmt.Errorf("--events-file: %w", err)
		}
		ls = append(ls, file)
	}
	if c.timeline < 0 {
		return nil, nil, nil, fmt.Errorf("--timeline %d: want 0 (off) or more", c.timeline)
	}
	if c.timeline > 0 {
		tl = events.NewTimeline(events.TimelineOptions{Total: c.timeline, PerInstance: timelinePerInstance})
		ls = append(ls, tl)
	}
	if c.webhook != "" {
		ls = append(ls, &events.Webhook{URL: c.webhook, Client: &http.Client{}})
	}
	if len(ls) == 0 {
		return nil, nil, func() {}, nil
	}
	d, err = events.NewDispatcher(events.Options{Logger: log, Registerer: reg, Budget: c.budget, Queue: c.queue, MaxBatch: c.batch}, ls...)
	if err != nil {
		if file != nil {
			_ = file.Close()
		}
		return nil, nil, nil, err
	}
	for _, l := range ls {
		log.Info("event listener", slog.String("listener", l.Name()), slog.Duration("budget", c.budget))
	}
	return d, tl, func() {
		ctx, cancel := context.WithTimeout(context.Background(), c.budget+time.Second)
		defer cancel()
		if err := d.Close(ctx); err != nil {
			log.Warn("event listeners", slog.Any("err", err))
		}
		if tl != nil {
			tl.Close()
		}
		if file != nil {
			if err := file.Close(); err != nil {
				log.Warn("event listeners", slog.Any("err", err))
			}
		}
	}, nil
}
