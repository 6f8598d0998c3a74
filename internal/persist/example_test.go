package persist_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/orchd/orchd/internal/persist"
)

func Example() {
	dir, err := os.MkdirTemp("", "orchd-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	st, err := persist.Open(filepath.Join(dir, "orchd.db"), persist.Options{})
	if err != nil {
		log.Fatal(err) // ErrLocked, ErrSchemaTooNew, ErrCorrupt, ...
	}
	defer st.Close()

	// The instance received a purchase order and now waits for the
	// correlated shipping notice, or gives up after a day.
	id := persist.NewID()
	err = st.Commit(&persist.Checkpoint{
		Instance: persist.Instance{
			ID:           id,
			Process:      "{urn:example:po}PurchaseOrder",
			State:        persist.Waiting,
			Frames:       []byte("runtime-encoded frames"),
			Correlations: map[string]string{"order": "PO-42"},
		},
		Vars:      map[int][]byte{0: []byte("<po id='PO-42'/>")},
		AddRoutes: []persist.Route{{Key: "ship|PO-42"}},
		AddTimers: []persist.Timer{{Due: time.Now().Add(24 * time.Hour), Tag: "pick#1/onAlarm"}},
	})
	if err != nil {
		log.Fatal(err)
	}

	// The shipping notice arrives (perhaps after a restart).
	owner, ok, err := st.Route("ship|PO-42")
	if err != nil || !ok {
		log.Fatal("no route", err)
	}
	in, vars, err := st.Instance(owner)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(in.State, in.Correlations["order"], string(vars[0]))

	// It completes: drop the route and the timer, then clean up.
	err = st.Commit(&persist.Checkpoint{Instance: persist.Instance{ID: id}, Delete: true})
	if err != nil {
		log.Fatal(err)
	}
	_, _, err = st.Instance(id)
	fmt.Println(err != nil)
	// Output:
	// waiting PO-42 <po id='PO-42'/>
	// true
}
