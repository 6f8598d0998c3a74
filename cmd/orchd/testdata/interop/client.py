"""zeep client of orchd's example processes, built from the running
orchd's ?wsdl (its service address, not one given here).

usage: client.py WSDL_URL po|approval ID [user password] [replyto URL]
Prints one line per call: ack/fault/status followed by key=value fields.
REQUESTS_CA_BUNDLE names the CA for https.
"""
import sys

import zeep
from lxml import etree
from zeep.exceptions import Fault
from zeep.wsa import WsAddressingPlugin
from zeep.wsse.username import UsernameToken


def order(client, po_id, qty):
    return dict(
        poId=po_id, orderDate="2007-06-01",
        customer=dict(id="CUST-42", name="Acme Widgets Ltd", email="buyer@acme.example"),
        items=dict(item=[dict(sku="SKU-A100", qty=qty, unitPrice="19.99"),
                         dict(sku="SKU-B200", qty=1, unitPrice="250.00")]),
        shipTo=dict(street="1 Industrial Way", city="Springfield", postalCode="12345", country="US"))


def main():
    url, kind, ident = sys.argv[1:4]
    rest = sys.argv[4:]
    wsse, reply_to = None, None
    if rest[:1] == ["replyto"]:
        reply_to = rest[1]
    elif len(rest) >= 2:
        wsse = UsernameToken(rest[0], rest[1], use_digest=True)
    plugins = [WsAddressingPlugin()] if reply_to else []
    client = zeep.Client(url, wsse=wsse, plugins=plugins)
    svc = client.service
    if kind == "po":
        if reply_to:
            wsa = "http://www.w3.org/2005/08/addressing"
            hdr = etree.Element("{%s}ReplyTo" % wsa)
            etree.SubElement(hdr, "{%s}Address" % wsa).text = reply_to
            res = svc.submitPurchaseOrder(**order(client, ident, 2), _soapheaders=[hdr])
            print("replyto-sent result=%s" % (res,))
            return
        ack = svc.submitPurchaseOrder(**order(client, ident, 2))
        print("ack poId=%s status=%s total=%s" % (ack.poId, ack.status, ack.total))
        try:
            svc.submitPurchaseOrder(**order(client, ident + "-BAD", 0))
            print("nofault")
        except Fault as f:
            detail = f.detail
            fault = detail[0] if detail is not None and len(detail) else None
            poid = fault.findtext("{urn:example:po}poId") if fault is not None else ""
            print("fault code=%s poId=%s element=%s" % (f.code, poid, etree.QName(fault).localname if fault is not None else ""))
    else:
        st = svc.requestApproval(requestId=ident, amount="1200.00", requester="ann", timeout="PT1H")
        print("status requestId=%s status=%s" % (st.requestId, st.status))
        st = svc.decide(requestId=ident, approved=True, approver="bob")
        print("status requestId=%s status=%s" % (st.requestId, st.status))


if __name__ == "__main__":
    main()
