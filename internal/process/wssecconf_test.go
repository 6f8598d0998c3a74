package process

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rtInvokeWith is a copy of the rt-invoke bundle with deploy.xml
// settings after the <service> of its <provide> (line 7) and of its
// <invoke> (line 10), in the orchd namespace.
func rtInvokeWith(t *testing.T, provide, invoke string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "rt-invoke")
	copyDir(t, filepath.Join(bundlesDir, "rt-invoke"), dir)
	dd := filepath.Join(dir, "deploy.xml")
	b, err := os.ReadFile(dd)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(b), `<service name="tns:TestService" port="TestPort"/>`, `<service name="tns:TestService" port="TestPort"/>`+provide, 1)
	s = strings.Replace(s, `<service name="tns:PartnerService" port="PartnerPort"/>`, `<service name="tns:PartnerService" port="PartnerPort"/>`+invoke, 1)
	s = strings.Replace(s, `<deploy `, `<deploy xmlns:orchd="urn:orchd:deploy" `, 1)
	if err := os.WriteFile(dd, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// checkDeployError fails t unless err says each of wants.
func checkDeployError(t *testing.T, err error, wants []string) {
	t.Helper()
	if err == nil {
		t.Fatal("deployed, want an error")
	}
	for _, w := range wants {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
}

// TestUsernameTokenSettings reads deploy.xml's orchd:usernameToken on
// rt-invoke's <provide> (line 7) and <invoke> (line 10): good settings
// reach the endpoints, bad ones are deploy errors naming the line and
// never a password.
func TestUsernameTokenSettings(t *testing.T) {
	t.Setenv("ORCHD_TEST_TOKEN_PW", "from-env")
	const users = "bob:{PLAIN}b0b-secret\n"
	tests := []struct {
		name            string
		provide, invoke string            // settings after each <service>
		files           map[string]string // more files of the bundle, mode 0600
		mode            os.FileMode       // of users.txt, when not 0600
		errs            []string
		auth, signed    bool
		signer          string // the Signer's String
	}{
		{name: "both", provide: `<orchd:usernameToken credentials="users.txt"/>`, files: map[string]string{"users.txt": users},
			invoke: `<orchd:usernameToken user="orchd" passwordEnv="ORCHD_TEST_TOKEN_PW"/>`, auth: true, signed: true,
			signer: `UsernameToken PasswordDigest of user "orchd"`},
		{name: "text from a file", invoke: `<orchd:usernameToken user="u" passwordFile="pw.txt" passwordType="text"/>`,
			files: map[string]string{"pw.txt": "p\n"}, signed: true, signer: `UsernameToken PasswordText of user "u"`},
		{name: "digest only, a freshness", provide: `<orchd:usernameToken credentials="users.txt" passwordType="digest" freshness="PT1M"/>`,
			files: map[string]string{"users.txt": users}, auth: true},
		{name: "no credentials attribute", provide: `<orchd:usernameToken/>`, errs: []string{"deploy.xml:7", "orchd:usernameToken", "needs a credentials attribute"}},
		{name: "credentials readable by others", provide: `<orchd:usernameToken credentials="users.txt"/>`, files: map[string]string{"users.txt": users}, mode: 0o644,
			errs: []string{"deploy.xml:7", "may be read or written by users other than its owner", "0644"}},
		{name: "credentials outside the bundle", provide: `<orchd:usernameToken credentials="../users.txt"/>`, errs: []string{"deploy.xml:7", "must be a path inside the bundle"}},
		{name: "malformed credentials", provide: `<orchd:usernameToken credentials="users.txt"/>`, files: map[string]string{"users.txt": "bob:b0b-secret\n"},
			errs: []string{"deploy.xml:7", "line 1", "neither a bcrypt hash"}},
		{name: "bad password types", provide: `<orchd:usernameToken credentials="users.txt" passwordType="md5"/>`, files: map[string]string{"users.txt": users},
			invoke: `<orchd:usernameToken user="u" passwordEnv="ORCHD_TEST_TOKEN_PW" passwordType="any"/>`,
			errs:   []string{"deploy.xml:7", `passwordType must be digest, text or any, not "md5"`, "deploy.xml:10", `passwordType must be digest or text, not "any"`}},
		{name: "bad freshness", provide: `<orchd:usernameToken credentials="users.txt" freshness="5m"/>`, files: map[string]string{"users.txt": users},
			errs: []string{"deploy.xml:7", "freshness", `"5m"`}},
		{name: "no user, unset env", invoke: `<orchd:usernameToken passwordEnv="ORCHD_TEST_NOT_SET"/>`,
			errs: []string{"deploy.xml:10", "needs a user", "environment variable ORCHD_TEST_NOT_SET is not set"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := rtInvokeWith(t, tc.provide, tc.invoke)
			for name, content := range tc.files {
				mode := os.FileMode(0o600)
				if tc.mode != 0 && name == "users.txt" {
					mode = tc.mode
				}
				p := filepath.Join(dir, name)
				if err := os.WriteFile(p, []byte(content), mode); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(p, mode); err != nil { // whatever the umask
					t.Fatal(err)
				}
			}
			procs, err := loadBundle(dir)
			if tc.errs != nil {
				checkDeployError(t, err, tc.errs)
				for _, pw := range []string{"b0b-secret", "from-env"} {
					if strings.Contains(err.Error(), pw) {
						t.Errorf("error %q holds a password", err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			p := procs[0]
			if got := p.Endpoints[0].Auth != nil; got != tc.auth {
				t.Errorf("provided endpoint authenticates: %v, want %v", got, tc.auth)
			}
			pl := p.Plinks["partner"]
			if got := pl.PartnerEP.Security != nil; got != tc.signed {
				t.Errorf("partner calls signed: %v, want %v", got, tc.signed)
			}
			if tc.signed {
				if s, ok := pl.PartnerEP.Security.(interface{ String() string }); !ok || s.String() != tc.signer {
					t.Errorf("signer %v, want %s", pl.PartnerEP.Security, tc.signer)
				}
			}
		})
	}
}
