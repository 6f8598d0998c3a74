package expr

import (
	"testing"

	"github.com/beevik/etree"
)

// TestUndo: each kind of change, recorded and then made, is taken back
// by Rollback, in any combination: the tree reads as it did before.
func TestUndo(t *testing.T) {
	const before = `<v><a x="1" y="2">text<b>in b</b>tail</a><c>c</c><d/><e>e</e></v>`
	changes := []struct {
		name string
		do   func(u *Undo, root *etree.Element)
	}{
		{"content replaced", func(u *Undo, root *etree.Element) {
			a := root.SelectElement("a")
			u.Content(a)
			src := etree.NewElement("src")
			src.CreateAttr("z", "9")
			src.CreateElement("new").SetText("n")
			ReplaceContent(a, src)
		}},
		{"one text child set", func(u *Undo, root *etree.Element) {
			c := root.SelectElement("c")
			u.Content(c)
			SetText(c, "changed")
		}},
		{"empty element given text", func(u *Undo, root *etree.Element) {
			d := root.SelectElement("d")
			u.Content(d)
			SetText(d, "filled")
		}},
		{"text node set", func(u *Undo, root *etree.Element) {
			cd := root.SelectElement("e").Child[0].(*etree.CharData)
			u.Text(cd)
			cd.SetData("other")
		}},
		{"attribute set", func(u *Undo, root *etree.Element) {
			a := root.SelectElement("a") // its last attribute (another change may have replaced them)
			i := len(a.Attr) - 1
			u.Attr(a, i)
			a.Attr[i].Value = "changed"
		}},
		{"child replaced", func(u *Undo, root *etree.Element) {
			i := root.SelectElement("c").Index()
			u.Child(root, i)
			root.RemoveChildAt(i)
			root.InsertChildAt(i, etree.NewElement("swapped"))
		}},
		{"child added", func(u *Undo, root *etree.Element) {
			n := etree.NewElement("added")
			u.Added(root, n)
			root.AddChild(n)
		}},
		{"func", func(u *Undo, root *etree.Element) {
			root.CreateAttr("outside", "1")
			u.Func(func() { root.RemoveAttr("outside") })
		}},
	}
	for mask := 1; mask < 1<<len(changes); mask++ {
		doc := etree.NewDocument()
		if err := doc.ReadFromString(before); err != nil {
			t.Fatal(err)
		}
		var u Undo
		var names []string
		for i, c := range changes {
			if mask&(1<<i) != 0 {
				c.do(&u, doc.Root())
				names = append(names, c.name)
			}
		}
		changed, _ := doc.WriteToString()
		if changed == before {
			t.Fatalf("%v changed nothing", names)
		}
		u.Rollback()
		got, _ := doc.WriteToString()
		if got != before {
			t.Fatalf("after %v and Rollback:\n got %s\nwant %s", names, got, before)
		}
		if u.Len() != 0 {
			t.Fatalf("%d records left after Rollback", u.Len())
		}
		for _, k := range doc.Root().ChildElements() {
			if k.Parent() != doc.Root() || doc.Root().Child[k.Index()] != k {
				t.Fatalf("after %v: child %s has parent or index wrong", names, k.Tag)
			}
		}
	}
}
