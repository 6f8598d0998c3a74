// gSOAP client of orchd's order approval process: wsdl2h reads the
// running orchd's ?wsdl, soapcpp2 -j makes the proxy, whose default
// endpoint is the WSDL's soap:address (none is given here).
//
// usage: client ID [CA_FILE]
// Prints one line per call: status followed by key=value fields.
#include "soapApprovalBindingProxy.h"
#include "ApprovalBinding.nsmap"

#include <cstdio>
#include <string>

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: client ID [CA_FILE]\n");
    return 2;
  }
  ApprovalBindingProxy proxy;
#ifdef WITH_OPENSSL
  if (argc > 2 && soap_ssl_client_context(proxy.soap, SOAP_SSL_DEFAULT, NULL, NULL, argv[2], NULL, NULL)) {
    proxy.soap_stream_fault(std::cerr);
    return 1;
  }
#endif
  _ns1__approvalRequest *req = soap_new__ns1__approvalRequest(proxy.soap);
  req->requestId = argv[1];
  req->amount = "1200.00";
  req->requester = "ann";
  _ns1__approvalStatus st;
  if (proxy.requestApproval(req, st) != SOAP_OK) {
    proxy.soap_stream_fault(std::cerr);
    return 1;
  }
  std::printf("status requestId=%s status=%s\n", st.requestId.c_str(), st.status.c_str());
  _ns1__decision *dec = soap_new__ns1__decision(proxy.soap);
  dec->requestId = argv[1];
  dec->approved = true;
  dec->approver = "bob";
  _ns1__approvalStatus st2;
  if (proxy.decide(dec, st2) != SOAP_OK) {
    proxy.soap_stream_fault(std::cerr);
    return 1;
  }
  std::printf("status requestId=%s status=%s\n", st2.requestId.c_str(), st2.status.c_str());
  return 0;
}
