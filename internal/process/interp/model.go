package interp

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/events"
	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/actstats"
	"github.com/orchd/orchd/internal/process/plan"
	"github.com/orchd/orchd/internal/process/xmldoc"
)

// Version is one deployed version of a Plan: the plan, which it embeds,
// and the state that belongs to the version on one engine rather than to
// the compiled process. LoadBundle returns a fresh Version per plan;
// NewVersion makes another from the same plan, for another engine or a
// redeploy.
type Version struct {
	*plan.Plan
	// Number numbers the deploys of this process (versions.go): 1 for
	// its first deploy, then one more for each redeploy; set by whoever
	// deploys it, before Deploy or Redeploy; 0 when unversioned.
	Number int
	// Deployed is when the engine took the version (Deploy, Redeploy,
	// AddRetired), unless set before.
	Deployed time.Time

	// Metrics are the version's series, resolved at deploy; invokeMetrics
	// holds, indexed like acts, each invoke's partner series (nil for
	// other activities).
	Metrics       *ProcMetrics
	InvokeMetrics []*PartnerMetrics
	// Sink receives the events of the version's instances (set at
	// deploy: the engine's Options.Events; nil emits none).
	Sink *events.Dispatcher
	// Partners holds, indexed like plist, the binding the engine attached
	// to each partner link's deploy-time endpoint (bindLocked; guarded by
	// the engine's mu until published).
	Partners []exchange.Partner
	// RetiredAt is when the version was retired (versions.go; guarded
	// by Engine.mu); starting counts the persistent instances being
	// created on it, not yet in the store.
	RetiredAt time.Time
	Starting  atomic.Int32
	// Stats are the version's counters (mgmt_processes.go); ActStats,
	// by activity id, the timing of sampled instances and the faults.
	Stats    procStats
	ActStats actstats.Table
}

// NewVersion returns a new, undeployed version of the plan.
func NewVersion(pl *plan.Plan) *Version {
	return &Version{Plan: pl, ActStats: actstats.New(len(pl.Acts)),
		InvokeMetrics: make([]*PartnerMetrics, len(pl.Acts)), Partners: make([]exchange.Partner, len(pl.Plist))}
}

// NewVersions returns a new, undeployed version of each plan (a
// bundle's, as the compiler returns them).
func NewVersions(pls []*plan.Plan) []*Version {
	ps := make([]*Version, len(pls))
	for i, pl := range pls {
		ps[i] = NewVersion(pl)
	}
	return ps
}

// faultValue is a BPEL fault travelling through the instance.
type faultValue struct {
	Name exchange.QName
	// data is the fault message (messageType faults) or nil.
	data *exchange.Message
	// elem is the fault element (element faults) or nil.
	elem   *etree.Element
	Reason string
	at     xmldoc.Pos
}

// inActivity names activity b in err's reason when err is a standard
// fault (one of the activity's own making).
func inActivity(err error, b *plan.Base) error {
	if f, ok := err.(*faultValue); ok && f.Name.Space == xmldoc.NSBPEL {
		f.Reason = b.Describe() + ": " + f.Reason
	}
	return err
}

func (f *faultValue) Error() string {
	if f.Reason != "" {
		return fmt.Sprintf("fault %s at %s: %s", f.Name, f.at, f.Reason)
	}
	return fmt.Sprintf("fault %s at %s", f.Name, f.at)
}

// Standard BPEL faults.
func BpelFault(local string) exchange.QName {
	return exchange.QName{Space: xmldoc.NSBPEL, Local: local}
}
