package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"

	"github.com/orchd/orchd/internal/etcdtest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "etcdmember:", err)
		os.Exit(1)
	}
}

// run starts the member described by args, reports "ready" on stdout
// and serves until ctx ends or the member fails.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("etcdmember", flag.ContinueOnError)
	fs.SetOutput(stderr)
	name := fs.String("name", "m0", "member name")
	dir := fs.String("dir", "", "data directory (required)")
	peer := fs.String("peer", "", "peer URL, listened on and advertised (required)")
	client := fs.String("client", "", "client URL, listened on and advertised (required)")
	initial := fs.String("initial-cluster", "", `all members, "name=peerURL,..." (default: this member alone)`)
	timeout := fs.Duration("start-timeout", etcdtest.StartTimeout, "bound on becoming ready")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" || *peer == "" || *client == "" {
		return errors.New("--dir, --peer and --client are required")
	}
	pu, err := url.Parse(*peer)
	if err != nil {
		return fmt.Errorf("--peer: %w", err)
	}
	cu, err := url.Parse(*client)
	if err != nil {
		return fmt.Errorf("--client: %w", err)
	}
	if *initial == "" {
		*initial = *name + "=" + *peer
	}
	e, err := embed.StartEtcd(etcdtest.MemberConfig(*name, *dir, *pu, *cu, *initial))
	if err != nil {
		return fmt.Errorf("start: %w", err)
	}
	defer e.Close()
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		return fmt.Errorf("member failed: %w", err)
	case <-time.After(*timeout):
		e.Server.Stop()
		return fmt.Errorf("not ready within %v", *timeout)
	case <-ctx.Done():
		return nil
	}
	fmt.Fprintln(stdout, "ready")
	select {
	case err := <-e.Err():
		return fmt.Errorf("member failed: %w", err)
	case <-ctx.Done():
		return nil
	}
}
