package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/orchd/orchd/internal/mgmt"
)

// brokenHow damages one stored instance in a way its decoder must notice.
type brokenHow struct {
	req    string // the approval request ID of the instance damaged
	what   string // what is damaged
	damage func(t *testing.T, tx *bolt.Tx, id string)
}

// TestCorruptCheckpoints damages, with bbolt directly while orchd is down,
// the record of one waiting instance, the control state of another and a
// variable of a third; a fourth is left alone. After a restart the good
// one recovers and is decided; each broken one is listed broken (the
// management listing and detail, orchd instances), a
// message routed to it gets a Server fault naming it as broken, and an
// operator can delete it.
// pendingApprovals starts orchd on a fresh data directory and asks for
// the approvals reqs, which wait for a decision; orchd keeps running.
func pendingApprovals(t *testing.T, reqs ...string) (deploy, data string, o *orchd) {
	t.Helper()
	crm, erp := startMocks(t)
	deploy = persistentDeploy(t, crm, erp)
	data = t.TempDir()
	client := &http.Client{Timeout: 30 * time.Second}
	o = startOrchd(t, "--deploy", deploy, "--data", data)
	for _, id := range reqs {
		r := post(t, client, o.base+approvalPath, textXML, "", approvalBody("requestApproval", id, "<appr:amount>10</appr:amount><appr:requester>ann</appr:requester>"))
		if st := approvalStatus(t, r); st != "PENDING" {
			t.Fatalf("%s: %s", id, st)
		}
	}
	return deploy, data, o
}

// damageStore changes the data file in data with bbolt directly (orchd
// must be down).
func damageStore(t *testing.T, data string, fn func(tx *bolt.Tx) error) {
	t.Helper()
	db, err := bolt.Open(filepath.Join(data, dataFile), 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(fn)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
}

func TestCorruptCheckpoints(t *testing.T) {
	reqs := []string{"B-good", "B-record", "B-frames", "B-variable"}
	deploy, data, o := pendingApprovals(t, reqs...)
	client := &http.Client{Timeout: 30 * time.Second}
	ids := map[string]string{} // request ID -> instance ID
	for _, in := range listInstances(t, o, mgmt.Query{Process: "OrderApproval"}) {
		for _, id := range reqs {
			if strings.Contains(in.Variables["request"], id+"<") {
				ids[id] = in.ID
			}
		}
	}
	if len(ids) != len(reqs) {
		t.Fatalf("instances of the requests: %v", ids)
	}
	kill9(t, o)

	damages := []brokenHow{
		{"B-record", "record", func(t *testing.T, tx *bolt.Tx, id string) {
			b := tx.Bucket([]byte("instances"))
			v := bytes.Clone(b.Get([]byte(id)))
			if err := b.Put([]byte(id), v[:len(v)/2]); err != nil {
				t.Fatal(err)
			}
		}},
		{"B-frames", "control state", func(t *testing.T, tx *bolt.Tx, id string) {
			b := tx.Bucket([]byte("instances"))
			v := bytes.Clone(b.Get([]byte(id)))
			// format, state, created, updated, process, fault, then the
			// frames: their tag, the fingerprint, the version byte.
			i := 2
			for range 2 {
				_, n := binary.Varint(v[i:])
				i += n
			}
			for range 2 {
				l, n := binary.Uvarint(v[i:])
				i += n + int(l)
			}
			_, n := binary.Uvarint(v[i:])
			i += n + 1
			l, n := binary.Uvarint(v[i:])
			i += n + int(l)
			v[i] = 99 // no such frames version
			if err := b.Put([]byte(id), v); err != nil {
				t.Fatal(err)
			}
		}},
		{"B-variable", "variable", func(t *testing.T, tx *bolt.Tx, id string) {
			b := tx.Bucket([]byte("vars"))
			c := b.Cursor()
			prefix := append([]byte(id), 0)
			k, _ := c.Seek(prefix)
			if !bytes.HasPrefix(k, prefix) {
				t.Fatalf("no variable of %s", id)
			}
			if err := b.Put(bytes.Clone(k), []byte("<unclosed><x>")); err != nil {
				t.Fatal(err)
			}
		}},
	}
	damageStore(t, data, func(tx *bolt.Tx) error {
		for _, d := range damages {
			d.damage(t, tx, ids[d.req])
		}
		return nil
	})

	s := startMgmt(t, deploy, "--data", data)
	// The record and the control state are found at recovery, the
	// variable when the instance is next loaded.
	if logs := s.logs.String(); !strings.Contains(logs, "broken=2") ||
		!strings.Contains(logs, ids["B-record"]) || !strings.Contains(logs, ids["B-frames"]) {
		t.Errorf("recovery did not report the two broken instances:\n%s", logs)
	}
	r := post(t, client, s.base+approvalPath, textXML, "", approvalBody("decide", "B-good", "<appr:approved>true</appr:approved><appr:approver>bob</appr:approver>"))
	if st := approvalStatus(t, r); st != "APPROVED" {
		t.Errorf("the good instance, decided: %s", st)
	}
	for _, d := range damages {
		r := post(t, client, s.base+approvalPath, textXML, "", approvalBody("decide", d.req, "<appr:approved>true</appr:approved><appr:approver>bob</appr:approver>"))
		code, reason := faultCode(t, r.body)
		if code != "Server" || !strings.Contains(reason, ids[d.req]) || !strings.Contains(reason, "broken") {
			t.Errorf("decision for the instance with a damaged %s: %d %s %q", d.what, r.status, code, reason)
		}
	}
	if n := strings.Count(s.logs.String(), `msg="instance is broken:`); n != 3 {
		t.Errorf("%d log lines on broken instances, want one each (3):\n%s", n, s.logs)
	}

	byID := map[string]mgmt.InstanceDetail{}
	for _, in := range listInstances(t, &orchd{base: s.base}, mgmt.Query{Process: "OrderApproval"}) {
		byID[in.ID] = in
	}
	for _, in := range listInstances(t, &orchd{base: s.base}, mgmt.Query{State: mgmt.StateBroken}) {
		byID[in.ID] = in
	}
	ctx := context.Background()
	page, err := s.b.Instances(ctx, mgmt.Query{})
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]mgmt.Instance{}
	for _, in := range page.Instances {
		listed[in.ID] = in
	}
	if st := byID[ids["B-good"]].State; st != "completed" {
		t.Errorf("listing with details: the good instance is %q", st)
	}
	for _, d := range damages {
		id := ids[d.req]
		if st := byID[id].State; st != mgmt.StateBroken {
			t.Errorf("listing with details: the instance with a damaged %s is %q", d.what, st)
		}
		if in := listed[id]; in.State != mgmt.StateBroken || in.Fault == "" {
			t.Errorf("management listing: the instance with a damaged %s: %+v", d.what, in)
		}
		det, err := s.b.Instance(ctx, id)
		if err != nil || det.State != mgmt.StateBroken || det.Fault == "" || len(det.Actions) != 1 || det.Actions[0] != mgmt.Delete {
			t.Errorf("management detail: the instance with a damaged %s: %+v %v", d.what, det, err)
		}
	}
	if err := s.b.Act(ctx, ids["B-frames"], mgmt.Delete); err != nil {
		t.Errorf("delete the instance with a damaged control state: %v", err)
	}
	if err := s.b.Act(ctx, ids["B-record"], mgmt.Delete); err != nil {
		t.Errorf("delete the instance with a damaged record: %v", err)
	}
	for _, id := range []string{ids["B-frames"], ids["B-record"]} {
		if _, err := s.b.Instance(ctx, id); err == nil {
			t.Errorf("instance %s still there after Delete", id)
		}
	}
	r = post(t, client, s.base+approvalPath, textXML, "", approvalBody("decide", "B-record", "<appr:approved>true</appr:approved><appr:approver>bob</appr:approver>"))
	if code, reason := faultCode(t, r.body); code != "Client" {
		t.Errorf("decision for the deleted instance: %s %q, want the Client fault of no instance", code, reason)
	}
}

// TestInstancesCommandBroken: orchd instances lists a broken instance as
// broken, with what failed to decode, and --state broken selects it.
func TestInstancesCommandBroken(t *testing.T) {
	deploy, data, o := pendingApprovals(t, "C-1", "C-2")
	ins := listInstances(t, o, mgmt.Query{Process: "OrderApproval"})
	if len(ins) != 2 {
		t.Fatalf("%d instances", len(ins))
	}
	kill9(t, o)
	damageStore(t, data, func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("instances")).Put([]byte(ins[1].ID), []byte{1, 2, 0xff})
	})
	out, err := runOrchd(t, "instances", "--data", data, "--deploy", deploy, "--state", "broken")
	if err != nil {
		t.Fatalf("orchd instances: %v\n%s", err, out)
	}
	if s := string(out); !strings.Contains(s, ins[1].ID+"  broken") || strings.Contains(s, ins[0].ID) || !strings.Contains(s, "fault: persist: data file corrupt") {
		t.Errorf("orchd instances --state broken:\n%s", s)
	}
}
