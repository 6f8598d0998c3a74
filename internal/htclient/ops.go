package htclient

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/humantask"
	"github.com/orchd/orchd/internal/xmlparse"
)

// opFunc answers one operation of the API as who: it reads the
// operation element's arguments, runs it on the task engine and fills
// resp, the response element.
type opFunc func(ctx context.Context, t *humantask.Engine, who humantask.Identity, op, resp *etree.Element) error

// operations are the operations the API serves, by name: the one list of
// them, which the WSDL's port type (HumanTaskClientAPIAdmin.wsdl) names
// exactly (TestWSDLOperations).
func operations() map[string]opFunc {
	return map[string]opFunc{
		"getMyTaskAbstracts":    list,
		"getMyTasks":            list, // WSO2 answers both with abstracts
		"getTaskInfo":           taskInfo,
		"getInput":              taskData,
		"getOutput":             taskData,
		"getComments":           comments,
		humantask.OpClaim:       plain,
		humantask.OpStart:       plain,
		humantask.OpStop:        plain,
		humantask.OpRelease:     plain,
		humantask.OpSuspend:     plain,
		humantask.OpResume:      plain,
		humantask.OpSkip:        plain,
		humantask.OpComplete:    complete,
		humantask.OpFail:        fail,
		humantask.OpSetPriority: setPriority,
		humantask.OpAddComment:  addComment,
		humantask.OpDelegate:    reassign,
		humantask.OpForward:     reassign,
	}
}

// arg is the text of op's child named name (any namespace).
func arg(op *etree.Element, name string) string {
	if c := argEl(op, name); c != nil {
		return strings.TrimSpace(c.Text())
	}
	return ""
}

func argEl(op *etree.Element, name string) *etree.Element {
	for _, c := range op.ChildElements() {
		if c.Tag == name {
			return c
		}
	}
	return nil
}

// genericHumanRoles are WS-HT's tGenericHumanRole values, the roles a
// listing's genericHumanRole keeps.
var genericHumanRoles = map[string]humantask.Role{
	"initiator": humantask.TaskInitiator, "stakeholders": humantask.TaskStakeholders,
	"potentialOwners": humantask.PotentialOwners, "actualOwner": humantask.ActualOwner,
	"excludedOwners": humantask.ExcludedOwners, "businessAdministrators": humantask.BusinessAdministrators,
	"notificationRecipients": humantask.Recipients,
}

func list(ctx context.Context, t *humantask.Engine, who humantask.Identity, op, resp *etree.Element) error {
	f := humantask.Filter{Limit: 1000}
	for _, c := range op.ChildElements() {
		v := strings.TrimSpace(c.Text())
		switch c.Tag {
		case "status":
			if st, ok := humantask.ParseState(v); ok {
				f.States = append(f.States, st)
			}
		case "maxTasks":
			if n, err := strconv.Atoi(v); err == nil && n > 0 {
				f.Limit = n
			}
		case "taskType": // WS-HT: TASKS, NOTIFICATIONS or ALL
			switch strings.ToUpper(v) {
			case "TASKS":
				f.Notifications = new(bool)
			case "NOTIFICATIONS":
				f.Notifications = new(bool)
				*f.Notifications = true
			case "ALL", "":
			default:
				return fmt.Errorf("%w: taskType %q is not TASKS, NOTIFICATIONS or ALL", humantask.ErrArgument, v)
			}
		case "genericHumanRole":
			r, ok := genericHumanRoles[v]
			if !ok && v != "" {
				return fmt.Errorf("%w: genericHumanRole %q is not one of WS-HT's (initiator, stakeholders, potentialOwners, actualOwner, excludedOwners, businessAdministrators, notificationRecipients)", humantask.ErrArgument, v)
			}
			f.Role = r
		}
	}
	ts, err := t.List(ctx, who, f)
	if err != nil {
		return err
	}
	for _, tk := range ts {
		resp.AddChild(abstract("api:taskAbstract", tk))
	}
	return nil
}

func taskInfo(ctx context.Context, t *humantask.Engine, who humantask.Identity, op, resp *etree.Element) error {
	tk, err := t.Get(ctx, who, arg(op, "identifier"))
	if err == nil {
		resp.AddChild(abstract("api:task", tk))
	}
	return err
}

// taskData answers getInput and getOutput: the message's payload element
// in api:taskData (empty when the task has none yet).
func taskData(ctx context.Context, t *humantask.Engine, who humantask.Identity, op, resp *etree.Element) error {
	tk, err := t.Get(ctx, who, arg(op, "identifier"))
	if err != nil {
		return err
	}
	data := resp.CreateElement("api:taskData")
	src := tk.Input
	if op.Tag == "getOutput" {
		src = tk.Output
	}
	if el, err := humantask.ParseXML(src); err == nil && el != nil {
		data.AddChild(el)
	}
	return nil
}

func comments(ctx context.Context, t *humantask.Engine, who humantask.Identity, op, resp *etree.Element) error {
	tk, err := t.Get(ctx, who, arg(op, "identifier"))
	if err != nil {
		return err
	}
	for _, c := range tk.Comments {
		at := c.At.UTC().Format(time.RFC3339)
		ce := resp.CreateElement("api:comment")
		ce.CreateElement("htt:id").SetText(strconv.Itoa(c.ID))
		ce.CreateElement("htt:addedTime").SetText(at)
		ce.CreateElement("htt:addedBy").SetText(c.By)
		ce.CreateElement("htt:lastModifiedTime").SetText(at) // comments are never edited
		ce.CreateElement("htt:lastModifiedBy").SetText(c.By)
		ce.CreateElement("htt:text").SetText(c.Text)
	}
	return nil
}

// plain runs an operation that takes the task's identifier only.
func plain(ctx context.Context, t *humantask.Engine, who humantask.Identity, op, _ *etree.Element) error {
	_, err := t.Do(ctx, who, arg(op, "identifier"), humantask.Action{Op: op.Tag})
	return err
}

// complete takes the output from taskData: its element, as WS-HT's
// xsd:anyType carries it, or that element as escaped XML text, as WSO2
// BPS's clients send it (its WSDL types taskData xsd:string).
func complete(ctx context.Context, t *humantask.Engine, who humantask.Identity, op, _ *etree.Element) error {
	out := ""
	if d := argEl(op, "taskData"); d != nil {
		doc := xmlparse.NewDocument()
		if els := d.ChildElements(); len(els) > 0 {
			doc.SetRoot(els[0].Copy())
		} else if text := strings.TrimSpace(d.Text()); text != "" {
			if err := doc.ReadFromString(text); err != nil || doc.Root() == nil || len(doc.ChildElements()) != 1 {
				return fmt.Errorf("%w: taskData is neither an element nor one element as text", humantask.ErrArgument)
			}
		}
		if doc.Root() != nil {
			out, _ = doc.WriteToString()
		}
	}
	_, err := t.Do(ctx, who, arg(op, "identifier"), humantask.Action{Op: op.Tag, Output: out})
	return err
}

// fail takes the fault's name from fault/faultName (WS-HT), or a
// faultName child of the operation.
func fail(ctx context.Context, t *humantask.Engine, who humantask.Identity, op, _ *etree.Element) error {
	name := arg(op, "faultName")
	if f := argEl(op, "fault"); f != nil && name == "" {
		name = arg(f, "faultName")
	}
	_, err := t.Do(ctx, who, arg(op, "identifier"), humantask.Action{Op: op.Tag, Fault: humantask.Fault{Name: name}})
	return err
}

func setPriority(ctx context.Context, t *humantask.Engine, who humantask.Identity, op, _ *etree.Element) error {
	p, err := strconv.Atoi(arg(op, "priority"))
	if err != nil {
		return fmt.Errorf("%w: priority %q is not an integer", humantask.ErrArgument, arg(op, "priority"))
	}
	_, err = t.Do(ctx, who, arg(op, "identifier"), humantask.Action{Op: op.Tag, Priority: &p})
	return err
}

// addComment answers the new comment's id (commentID).
func addComment(ctx context.Context, t *humantask.Engine, who humantask.Identity, op, resp *etree.Element) error {
	tk, err := t.Do(ctx, who, arg(op, "identifier"), humantask.Action{Op: op.Tag, Comment: arg(op, "text")})
	if err != nil {
		return err
	}
	if n := len(tk.Comments); n > 0 {
		resp.CreateElement("api:commentID").SetText(strconv.Itoa(tk.Comments[n-1].ID))
		return nil
	}
	return errors.New("the comment is not on the task") // the engine added it: not the caller's fault
}

// reassign runs delegate (to the one user of organizationalEntity) and
// forward (to its users and groups).
func reassign(ctx context.Context, t *humantask.Engine, who humantask.Identity, op, _ *etree.Element) error {
	a := humantask.Action{Op: op.Tag, To: entities(argEl(op, "organizationalEntity"))}
	if op.Tag == humantask.OpDelegate {
		if len(a.To.Users) != 1 {
			return fmt.Errorf("%w: delegate names one user", humantask.ErrArgument)
		}
		a.User = a.To.Users[0]
	}
	_, err := t.Do(ctx, who, arg(op, "identifier"), a)
	return err
}

// entities reads a tOrganizationalEntity: its users and groups.
func entities(e *etree.Element) humantask.Entities {
	var out humantask.Entities
	if e == nil {
		return out
	}
	for _, x := range e.FindElements(".//*") {
		switch x.Tag {
		case "user":
			out.Users = append(out.Users, strings.TrimSpace(x.Text()))
		case "group":
			out.Groups = append(out.Groups, strings.TrimSpace(x.Text()))
		}
	}
	return out
}

// abstract is a task as the WSDL's htt:tTaskAbstract, its elements in
// the schema's order (WSO2 BPS's names: createdTime, updatedTime,
// packageName).
func abstract(tag string, t humantask.Task) *etree.Element {
	e := etree.NewElement(tag)
	add := func(n, v string) {
		if v != "" {
			e.CreateElement("htt:" + n).SetText(v)
		}
	}
	stamp := func(at time.Time) string {
		if at.IsZero() {
			return ""
		}
		return at.UTC().Format(time.RFC3339)
	}
	add("id", t.ID)
	add("taskType", map[bool]string{true: "NOTIFICATION", false: "TASK"}[t.Notification])
	name := e.CreateElement("htt:name")
	if t.Name.Space != "" {
		name.CreateAttr("xmlns:tn", t.Name.Space)
		name.SetText("tn:" + t.Name.Local)
	} else {
		name.SetText(t.Name.Local)
	}
	add("status", string(t.State))
	add("priority", strconv.Itoa(t.Priority))
	add("actualOwner", t.ActualOwner)
	updated := t.Updated
	if updated.IsZero() {
		updated = t.Created
	}
	e.CreateElement("htt:createdTime").SetText(stamp(t.Created))
	e.CreateElement("htt:updatedTime").SetText(stamp(updated))
	add("activationTime", stamp(t.Activated))
	add("isSkipable", strconv.FormatBool(t.Skipable))
	add("presentationName", t.Name.Local)
	add("presentationSubject", t.Subject)
	add("presentationDescription", t.Description)
	add("renderingMethodExists", "false")
	add("hasOutput", strconv.FormatBool(t.Output != ""))
	add("hasFault", strconv.FormatBool(t.Fault != nil))
	add("hasComments", strconv.FormatBool(len(t.Comments) > 0))
	add("numberOfComments", strconv.Itoa(len(t.Comments)))
	e.CreateElement("htt:packageName").SetText(t.Bundle)
	return e
}
