// Package reference is the purchase-order process of the workload contract
// (testdata/workload) written by hand in Go, with no engine: the
// yardstick that "engine overhead" is measured against (orchd tx/s divided
// by reference tx/s, same partners, same machine, same run).
//
// Handler does what deploy/purchase-order/PurchaseOrder.bpel does, as
// directly as it can: it decodes the SOAP 1.1 envelope holding
// po:purchaseOrder in one streaming pass (encoding/xml tokens into a
// struct, no DOM), computes orderTotal (sum of qty x unitPrice, rounded to
// cents as the process's XPath does) and lineCount, calls the CRM partner
// (crm:recordPurchaseOrder) and then the ERP partner (erp:createWorkOrder)
// over a shared keep-alive HTTP client, with request bodies in the exact
// shape of crm-request.xml and erp-request.xml, reads crmRef and
// workOrderId from their answers, and replies with po:purchaseOrderAck in
// the shape of po-ack.xml. Buffers and decoding state come from sync.Pools;
// nothing runs in another goroutine.
//
// It is correct, not merely fast: every text value is XML-escaped on the
// way out; a request that is not a well-formed SOAP 1.1 envelope holding a
// complete, valid po:purchaseOrder gets a SOAP Client fault; a partner that
// cannot be reached, answers with a non-2xx status or a fault, or answers
// without the expected field gets a SOAP Server fault naming it. Faults use
// HTTP 500, like orchd.
package reference
