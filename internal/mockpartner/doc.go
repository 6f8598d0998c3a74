// Package mockpartner implements the CRM and ERP partners of the
// purchase-order workload (testdata/workload, deploy/purchase-order) as
// plain HTTP handlers, for tests, demos and benchmarks.
//
// The partners are deliberately dumb and fast. Each accepts a SOAP 1.1
// document/literal request over HTTP POST, checks that the fields the
// workload contract requires are present, and answers with the poId it was
// sent and a reference taken from its own counter:
//
//   - CRM: crm:recordPurchaseOrder (urn:example:crm) is answered with
//     crm:recordPurchaseOrderResponse carrying crmRef CRM-00000001,
//     CRM-00000002, ... Required: poId, account/accountId, orderTotal.
//   - ERP: erp:createWorkOrder (urn:example:erp) is answered with
//     erp:createWorkOrderResponse carrying workOrderId WO-00000001, ...
//     Required: poId, crmRef, and at least one lines/line, each with sku
//     and quantity.
//
// A request that is not well-formed XML, is not a SOAP 1.1 envelope, holds
// another operation, or lacks a required field gets an HTTP 500 SOAP 1.1
// fault with faultcode soapenv:Client and a faultstring that names the
// problem (for a missing field, its path, such as crm:account/crm:accountId).
// A method other than POST gets 405, a body over MaxBodyBytes gets 413 with
// a Client fault.
//
// Responses are byte-for-byte in the shape of crm-response.xml and
// erp-response.xml: one line, no XML declaration, text/xml; charset=utf-8.
//
// The handlers do not look at the URL path or the SOAPAction header, so a
// partner can be mounted anywhere. Serve runs both partners on their own
// listeners until its context is cancelled.
package mockpartner
