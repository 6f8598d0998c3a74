// gSOAP client of orchd's purchase order processes: wsdl2h reads the
// running orchd's ?wsdl, soapcpp2 -j makes the proxy, whose default
// endpoint is the WSDL's soap:address (none is given here).
//
// usage: client ID [CA_FILE]
// Prints one line per call: ack/fault followed by key=value fields.
#include "soapPurchaseOrderSOAPBindingProxy.h"
#include "PurchaseOrderSOAPBinding.nsmap"

#include <cstdio>
#include <string>

static ns1__PurchaseOrderType *order(struct soap *soap, const std::string &id, int qty) {
  ns1__PurchaseOrderType *po = soap_new_ns1__PurchaseOrderType(soap);
  po->poId = id;
  po->orderDate = "2007-06-01";
  po->customer = soap_new_ns1__CustomerType(soap);
  po->customer->id = "CUST-42";
  po->customer->name = "Acme Widgets Ltd";
  po->customer->email = "buyer@acme.example";
  po->items = soap_new_ns1__ItemsType(soap);
  ns1__ItemType *a = soap_new_ns1__ItemType(soap);
  a->sku = "SKU-A100";
  a->qty = qty;
  a->unitPrice = "19.99";
  ns1__ItemType *b = soap_new_ns1__ItemType(soap);
  b->sku = "SKU-B200";
  b->qty = 1;
  b->unitPrice = "250.00";
  po->items->item.push_back(a);
  po->items->item.push_back(b);
  po->shipTo = soap_new_ns1__AddressType(soap);
  po->shipTo->street = "1 Industrial Way";
  po->shipTo->city = "Springfield";
  po->shipTo->postalCode = "12345";
  po->shipTo->country = "US";
  return po;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: client ID [CA_FILE]\n");
    return 2;
  }
  std::string id = argv[1];
  PurchaseOrderSOAPBindingProxy proxy;
#ifdef WITH_OPENSSL
  if (argc > 2 && soap_ssl_client_context(proxy.soap, SOAP_SSL_DEFAULT, NULL, NULL, argv[2], NULL, NULL)) {
    proxy.soap_stream_fault(std::cerr);
    return 1;
  }
#endif
  ns1__PurchaseOrderAckType ack;
  if (proxy.submitPurchaseOrder(order(proxy.soap, id, 2), ack) != SOAP_OK) {
    proxy.soap_stream_fault(std::cerr);
    return 1;
  }
  std::printf("ack poId=%s status=%s total=%s\n", ack.poId.c_str(), ack.status.c_str(), ack.total.c_str());
  ns1__PurchaseOrderAckType ack2;
  if (proxy.submitPurchaseOrder(order(proxy.soap, id + "-BAD", 0), ack2) == SOAP_OK) {
    std::printf("nofault\n");
    return 0;
  }
  if (proxy.soap->error != SOAP_FAULT) {
    proxy.soap_stream_fault(std::cerr);
    return 1;
  }
  const char **code = soap_faultcode(proxy.soap);
  SOAP_ENV__Detail *d = proxy.soap->fault ? proxy.soap->fault->detail : NULL;
  ns1__OrderFaultType *f = d ? d->ns1__orderFault : NULL;
  std::printf("fault code=%s poId=%s element=%s\n", code && *code ? *code : "", f ? f->poId.c_str() : "", f ? "orderFault" : "");
  return 0;
}
