"""The keys of the `[plugins.spam]` table: the folders trained on, the cutoffs, the IMAP servers spam_fetch reads
(a list of records, each checked at load) and the agents' daily labels."""

from __future__ import annotations

from pydantic import BaseModel, Field
from spamfilter.score import HAM_CUTOFF, SPAM_CUTOFF


class ImapServer(BaseModel):
    """One server spam_fetch reads, for one of the mail plugin's accounts."""

    account: str = Field(description="the mail account it holds ([plugins.mail] accounts' name)")
    host: str = Field(min_length=1, description="the server's host name")
    port: int = Field(993, ge=1, le=65535, description="993: TLS from the start; another port must offer STARTTLS")
    user: str = Field(description="the login")
    password_command: str = Field(description="a command printing the password on its first line")
    tls: bool = Field(True, description="false is accepted for a loopback host only (a local bridge, a test server)")


class SpamSettings(BaseModel):
    spam_folders: list[str] = Field(["Junk", "Spam"], description="each account's spam folders, names written with /")
    ham_folders: list[str] = Field(["INBOX", "Archive"], description="each account's ham folders, names written with /")
    ham_cutoff: float = Field(HAM_CUTOFF, ge=0, le=1, description="below this score a message is ham")
    spam_cutoff: float = Field(SPAM_CUTOFF, ge=0, le=1, description="above this score a message is spam")
    imap: list[ImapServer] = Field([], description="servers spam_fetch reads: [{ account, host, port, user, "
                                   "password_command }]; TLS always (993, or STARTTLS), but tls = false on a loopback "
                                   "host")
    agent_labels_per_day: int = Field(20, ge=0, le=10_000, description="the most spam_label calls agents may make in "
                                      "24 hours (all clients together; the person's own command line is not counted)")
