// Package taskform turns a task's output schema into an HTML form and
// the submitted form back into the output element: Inputs lists the
// form's fields for an element declaration (xsd.Set.Outline), one a
// simple value, with its kind (text, number, select for an enumeration,
// checkbox for a boolean, date), whether it is required and its current
// value; Parse reads the submitted values into an element of the
// declaration, which the caller validates with xsd.Set.Validate.
//
// Field names are paths of local names ("f.decision.verdict"), so a form
// holds nothing a user typed in a name; values reach the element as
// text, never as markup. A repeated element (maxOccurs above 1) gets
// numbered fields, one per occurrence ("f.order.line#2.sku"): those the
// current element has (at least minOccurs) and three blank ones more, at
// most maxOccurs; Parse reads every number sent, gaps left out.
//
// It imports only internal/xsd; it knows nothing of tasks or HTTP.
package taskform
