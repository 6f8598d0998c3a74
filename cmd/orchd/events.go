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
}

func eventFlags(fs *flag.FlagSet, c *eventsConfig) {
	fs.StringVar(&c.file, "events-file", "", "append instance events to this file, one JSON object a line (off when empty)")
	fs.StringVar(&c.webhook, "events-webhook", "", "POST instance events, a JSON array a batch, to this URL (off when empty)")
	fs.DurationVar(&c.budget, "events-budget", 2*time.Second, "longest one delivery to a listener may take; a listener that overruns it is cut off")
	fs.IntVar(&c.queue, "events-queue", 4096, "events queued per listener; when full, events are dropped (and counted)")
	fs.IntVar(&c.batch, "events-batch", 256, "most events one delivery carries")
}

// openEvents starts the configured listeners: nil when there are none
// (the runtime then builds no event at all). stop delivers what is queued
// (within the budget) and closes them.
func openEvents(c *eventsConfig, log *slog.Logger, reg prometheus.Registerer) (d *events.Dispatcher, stop func(), err error) {
	var ls []events.Listener
	var file *events.File
	if c.file != "" {
		if file, err = events.OpenFile(c.file); err != nil {
			return nil, nil, fmt.Errorf("--events-file: %w", err)
		}
		ls = append(ls, file)
	}
	if c.webhook != "" {
		ls = append(ls, &events.Webhook{URL: c.webhook, Client: &http.Client{}})
	}
	if len(ls) == 0 {
		return nil, func() {}, nil
	}
	d, err = events.NewDispatcher(events.Options{Logger: log, Registerer: reg, Budget: c.budget, Queue: c.queue, MaxBatch: c.batch}, ls...)
	if err != nil {
		if file != nil {
			_ = file.Close()
		}
		return nil, nil, err
	}
	for _, l := range ls {
		log.Info("event listener", slog.String("listener", l.Name()), slog.Duration("budget", c.budget))
	}
	return d, func() {
		ctx, cancel := context.WithTimeout(context.Background(), c.budget+time.Second)
		defer cancel()
		if err := d.Close(ctx); err != nil {
			log.Warn("event listeners", slog.Any("err", err))
		}
		if file != nil {
			if err := file.Close(); err != nil {
				log.Warn("event listeners", slog.Any("err", err))
			}
		}
	}, nil
}
