// node-soap client of orchd's example processes, built from the running
// orchd's ?wsdl (its service address, not one given here).
//
// usage: node client.js WSDL_URL po|approval ID [user password]
// Prints one line per call: ack/fault/status followed by key=value fields.
// NODE_PATH names the node_modules holding soap; NODE_EXTRA_CA_CERTS the
// CA for https.
'use strict';
const soap = require('soap');

function order(id, qty) {
  return {
    poId: id, orderDate: '2007-06-01',
    customer: { id: 'CUST-42', name: 'Acme Widgets Ltd', email: 'buyer@acme.example' },
    items: { item: [
      { sku: 'SKU-A100', qty: qty, unitPrice: '19.99' },
      { sku: 'SKU-B200', qty: 1, unitPrice: '250.00' },
    ] },
    shipTo: { street: '1 Industrial Way', city: 'Springfield', postalCode: '12345', country: 'US' },
  };
}

async function main() {
  const [url, kind, id, user, password] = process.argv.slice(2);
  const client = await soap.createClientAsync(url);
  if (user) {
    client.setSecurity(new soap.WSSecurity(user, password, { passwordType: 'PasswordDigest', hasTimeStamp: false }));
  }
  if (kind === 'po') {
    const [ack] = await client.submitPurchaseOrderAsync(order(id, 2));
    console.log(`ack poId=${ack.poId} status=${ack.status} total=${ack.total}`);
    try {
      await client.submitPurchaseOrderAsync(order(id + '-BAD', 0));
      console.log('nofault');
    } catch (err) {
      const f = err.root && err.root.Envelope && err.root.Envelope.Body && err.root.Envelope.Body.Fault;
      if (!f) throw err;
      const detail = f.detail && f.detail.orderFault;
      console.log(`fault code=${f.faultcode} poId=${detail ? detail.poId : ''} element=${detail ? 'orderFault' : ''}`);
    }
  } else {
    let [st] = await client.requestApprovalAsync({ requestId: id, amount: '1200.00', requester: 'ann', timeout: 'PT1H' });
    console.log(`status requestId=${st.requestId} status=${st.status}`);
    [st] = await client.decideAsync({ requestId: id, approved: true, approver: 'bob' });
    console.log(`status requestId=${st.requestId} status=${st.status}`);
  }
}

main().catch((err) => {
  console.error(err && err.stack ? err.stack : err);
  process.exit(1);
});
