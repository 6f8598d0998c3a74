package compile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// waiveBundle copies deploy/purchase-order into a temporary folder with
// one static analysis violation (SA00011: crm.wsdl imported under a
// namespace it does not define) and deploy.xml's <process> children
// extra added.
func waiveBundle(t *testing.T, extra string) string {
	t.Helper()
	src, dir := "../../../deploy/purchase-order", t.TempDir()
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		edit := func(old, new string) {
			if !strings.Contains(s, old) {
				t.Fatalf("%s has no %q", e.Name(), old)
			}
			s = strings.Replace(s, old, new, 1)
		}
		switch e.Name() {
		case "PurchaseOrder.bpel":
			edit(`location="crm.wsdl" namespace="urn:example:crm"`, `location="crm.wsdl" namespace="urn:example:not-crm"`)
		case "deploy.xml":
			edit(`<deploy xmlns="http://www.apache.org/ode/schemas/dd/2007/03"`, `<deploy xmlns="http://www.apache.org/ode/schemas/dd/2007/03" xmlns:orchd="urn:orchd:deploy"`)
			edit(`<active>true</active>`, `<active>true</active>`+extra)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A waived rule's finding deploys as a warning, from deploy.xml's
// orchd:waive or from LoadOptions.Waive; unwaived, it refuses the bundle;
// a malformed orchd:waive is refused with its line.
func TestWaive(t *testing.T) {
	tests := []struct {
		name, extra string
		opts        LoadOptions
		err         string // "" to deploy, with the finding as a warning
	}{
		{name: "not waived", err: "SA00011"},
		{name: "deploy.xml", extra: `<orchd:waive rules="SA00061 SA00011"/>`},
		{name: "options", opts: LoadOptions{Waive: []string{"SA00011"}}},
		{name: "another rule waived", extra: `<orchd:waive rules="SA00061"/>`, err: "SA00011"},
		{name: "malformed", extra: `<orchd:waive rules="SA11"/>`, err: `deploy.xml:14: <orchd:waive>: "SA11" is not a static analysis rule id`},
		{name: "empty", extra: `<orchd:waive/>`, err: "deploy.xml:14: <orchd:waive>: needs a rules attribute"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := loadWaiveBundle(t, tc.extra, tc.opts, tc.err)
			if tc.err == "" && (len(w) == 0 || !strings.Contains(w[0], "waived (orchd:waive): PurchaseOrder.bpel:40: <import") || !strings.Contains(w[0], "SA00011")) {
				t.Fatalf("warnings %q, want the waived SA00011 finding first", w)
			}
		})
	}
}

// loadWaiveBundle loads waiveBundle(extra) with opts: refused with an
// error holding wantErr, or, wantErr "", deployed as one process whose
// warnings it returns.
func loadWaiveBundle(t *testing.T, extra string, opts LoadOptions, wantErr string) []string {
	t.Helper()
	pls, err := LoadBundleWith(waiveBundle(t, extra), opts)
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("err = %v, want one with %q", err, wantErr)
		}
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(pls) != 1 {
		t.Fatalf("%d processes, want 1", len(pls))
	}
	return pls[0].Warnings
}
