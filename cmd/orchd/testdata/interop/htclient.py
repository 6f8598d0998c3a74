"""zeep client of orchd's WS-HumanTask client API, built from the running
orchd's /services/HumanTaskClientAPIAdmin?wsdl (its service address, not
one given here), signing in with HTTP Basic as people of the people file.

usage: htclient.py WSDL_URL EXPENSE_ID USER PASSWORD OUTSIDER PASSWORD

USER (a manager) finds the approval task of the expense EXPENSE_ID among
its READY tasks (getMyTaskAbstracts, then getInput), OUTSIDER tries to
claim it, and USER claims, starts and completes it with an approving
decision, then reads it back (getTaskInfo, getOutput). Prints one line
per step: a word followed by key=value fields.
"""
import sys
import time

import requests
import zeep
from lxml import etree
from zeep.exceptions import Fault
from zeep.transports import Transport

DECISION = ('<ex:decision xmlns:ex="urn:example:expense"><ex:approved>true</ex:approved>'
            '<ex:comment>approved through zeep</ex:comment></ex:decision>')


def client(url, user, password):
    session = requests.Session()
    session.auth = requests.auth.HTTPBasicAuth(user, password)
    return zeep.Client(url, transport=Transport(session=session))


def as_list(value):
    if value is None:
        return []
    if isinstance(value, list):
        return value
    return list(getattr(value, "taskAbstract", None) or [])


def text_of(data):
    """The XML text of an anyType value as zeep returns it."""
    if data is None:
        return ""
    if isinstance(data, list):
        return "".join(text_of(d) for d in data)
    if isinstance(data, etree._Element):
        return etree.tostring(data, encoding="unicode")
    return str(data)


def main():
    url, expense, user, password, outsider, outsider_password = sys.argv[1:7]
    svc = client(url, user, password).service
    task = None
    deadline = time.time() + 20
    while task is None and time.time() < deadline:
        for t in as_list(svc.getMyTaskAbstracts(taskType="ALL", status=["READY"])):
            if ">%s<" % expense in text_of(svc.getInput(identifier=t.id)):
                task = t
        if task is None:
            time.sleep(0.2)
    if task is None:
        print("no READY task for", expense)
        sys.exit(1)
    # name is an xsd:QName: its local part (zeep gives it as prefix:local)
    name = getattr(task.name, "localname", None) or str(task.name).split(":")[-1]
    print("task name=%s status=%s" % (name, task.status))
    try:
        client(url, outsider, outsider_password).service.claim(identifier=task.id)
        print("outsider claimed")
    except Fault as f:
        detail = f.detail[0] if f.detail is not None and len(f.detail) else None
        print("outsider-fault code=%s detail=%s" % (f.code.split(":")[-1] if f.code else "",
                                                  etree.QName(detail).localname if detail is not None else None))
    svc.claim(identifier=task.id)
    svc.start(identifier=task.id)
    svc.addComment(identifier=task.id, text="checked the receipts")
    svc.complete(identifier=task.id, taskData=DECISION)
    info = svc.getTaskInfo(identifier=task.id)
    print("info status=%s owner=%s comments=%s" % (info.status, info.actualOwner, info.numberOfComments))
    out = text_of(svc.getOutput(identifier=task.id))
    print("output approved=%s" % ("true" if ">true</" in out else out))


if __name__ == "__main__":
    main()
