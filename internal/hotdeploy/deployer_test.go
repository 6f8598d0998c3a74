package hotdeploy

import "testing"

func TestODEBase(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"HelloWorld-1", "HelloWorld"},
		{"HelloWorld.12", "HelloWorld"},
		{"HelloWorld", "HelloWorld"},
		{"purchase-order", "purchase-order"},
		{"purchase-order-persistent", "purchase-order-persistent"},
		{"po-2-3", "po-2"},
		{"x-", "x-"},
		{"-1", "-1"},
		{"a-+1", "a-+1"},
	} {
		if got := odeBase(tc.name); got != tc.want {
			t.Errorf("odeBase(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}
