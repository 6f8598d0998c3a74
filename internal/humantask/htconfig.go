package humantask

import (
	"encoding/xml"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/process/xmldoc"
)

// NSConfig is the namespace of WSO2 BPS's htconfig.xml (hic).
const NSConfig = "http://wso2.org/ht/schema/deployment/config"

// HTConfig is a bundle's htconfig.xml as WSO2 BPS reads it: for each task
// the service and port it is published at (the process invokes it there)
// and the callback service its outcome goes to; for each notification
// the service it is published at.
//
//	<hic:HumanInteractionsConfiguration xmlns:hic="http://wso2.org/ht/schema/deployment/config">
//	  <hic:task qname="ns:ApproveExpense">
//	    <hic:publish><hic:service name="ns:ApprovalService" port="ApprovalPort"/></hic:publish>
//	    <hic:callback><hic:service name="ns:ApprovalCallbackService" port="ApprovalCallbackPort"/></hic:callback>
//	  </hic:task>
//	  <hic:notification qname="ns:Reminder">
//	    <hic:publish><hic:service name="ns:ReminderService" port="ReminderPort"/></hic:publish>
//	  </hic:notification>
//	</hic:HumanInteractionsConfiguration>
type HTConfig struct {
	Entries map[xml.Name]*ConfigEntry
}

// ConfigEntry is one task's or notification's entry.
type ConfigEntry struct {
	Name         xml.Name
	Notification bool
	Publish      ServiceRef
	Callback     ServiceRef
	Pos          string
	// at is Pos as a position, for errors found after parsing.
	at xmldoc.Pos
}

// ParseHTConfig reads an htconfig.xml; every problem names the file,
// element and line.
func ParseHTConfig(file string, data []byte) (*HTConfig, error) {
	doc, err := xmldoc.Parse(file, data)
	if err != nil {
		return nil, err
	}
	var errs xmldoc.Errors
	root := doc.Root
	cfg := &HTConfig{Entries: map[xml.Name]*ConfigEntry{}}
	if root.Tag != "HumanInteractionsConfiguration" || root.NamespaceURI() != NSConfig {
		errs.Add(doc.Pos(root), root.Tag, "want hic:HumanInteractionsConfiguration in namespace %s", NSConfig)
		return nil, errs.Err()
	}
	service := func(parent *etree.Element, tag string, required bool) ServiceRef {
		var w *etree.Element
		for _, c := range parent.ChildElements() {
			if c.Tag == tag && c.NamespaceURI() == NSConfig {
				w = c
			}
		}
		if w == nil {
			if required {
				errs.Add(doc.Pos(parent), parent.Tag, "hic:%s is missing", tag)
			}
			return ServiceRef{}
		}
		var s *etree.Element
		for _, c := range w.ChildElements() {
			if c.Tag == "service" && c.NamespaceURI() == NSConfig {
				s = c
			}
		}
		if s == nil {
			errs.Add(doc.Pos(w), w.Tag, "hic:%s needs a hic:service", tag)
			return ServiceRef{}
		}
		space, local, err := xmldoc.ResolveQName(s, s.SelectAttrValue("name", ""), false)
		if err != nil {
			errs.Add(doc.Pos(s), s.Tag, "name: %v", err)
		}
		port := s.SelectAttrValue("port", "")
		if port == "" {
			errs.Add(doc.Pos(s), s.Tag, "port is missing")
		}
		return ServiceRef{Service: xml.Name{Space: space, Local: local}, Port: port}
	}
	for _, c := range root.ChildElements() {
		if c.NamespaceURI() != NSConfig {
			continue
		}
		if c.Tag != "task" && c.Tag != "notification" {
			errs.Add(doc.Pos(c), c.Tag, "unknown element (want hic:task or hic:notification)")
			continue
		}
		space, local, err := xmldoc.ResolveQName(c, c.SelectAttrValue("qname", ""), false)
		if err != nil {
			errs.Add(doc.Pos(c), c.Tag, "qname: %v", err)
			continue
		}
		n := xml.Name{Space: space, Local: local}
		if q := cfg.Entries[n]; q != nil {
			errs.Add(doc.Pos(c), c.Tag, "%s is configured twice (first at %s)", local, q.Pos)
			continue
		}
		en := &ConfigEntry{Name: n, Notification: c.Tag == "notification", Pos: doc.Pos(c).String(), at: doc.Pos(c)}
		en.Publish = service(c, "publish", true)
		if c.Tag == "task" {
			en.Callback = service(c, "callback", false)
		}
		cfg.Entries[n] = en
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return cfg, nil
}
