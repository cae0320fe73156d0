"""PowerShell's name tables: built-in aliases (the union of Windows PowerShell 5.1 and 7), and the
.NET types and methods that are plainly free of side effects."""

from __future__ import annotations

import re

from secure_shell.policy.dialect import DialectName

DIALECT: DialectName = "powershell"
QUOTES = {"\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u201c": '"', "\u201d": '"', "\u201e": '"'}

_ALIAS_TABLE = """
ac add-content; asnp add-pssnapin; cat get-content; cd set-location; cfs convertfrom-string; chdir set-location;
clc clear-content; clear clear-host; clhy clear-history; cli clear-item; clp clear-itemproperty; cls clear-host;
clv clear-variable; cnsn connect-pssession; compare compare-object; copy copy-item; cp copy-item;
cpi copy-item; cpp copy-itemproperty; curl invoke-webrequest; cvpa convert-path; dbp disable-psbreakpoint;
del remove-item; diff compare-object; dir get-childitem; dnsn disconnect-pssession; ebp enable-psbreakpoint;
echo write-output; epal export-alias; epcsv export-csv; epsn export-pssession; erase remove-item;
etsn enter-pssession; exsn exit-pssession; fc format-custom; fhx format-hex; fl format-list;
foreach foreach-object; ft format-table; fw format-wide; gal get-alias; gbp get-psbreakpoint; gc get-content;
gcb get-clipboard; gci get-childitem; gcm get-command; gcs get-pscallstack; gdr get-psdrive; ghy get-history;
gi get-item; gin get-computerinfo; gjb get-job; gl get-location; gm get-member; gmo get-module;
gp get-itemproperty; gps get-process; gpv get-itempropertyvalue; group group-object; gsn get-pssession;
gsnp get-pssnapin; gsv get-service; gtz get-timezone; gu get-unique; gv get-variable; gwmi get-wmiobject;
h get-history; history get-history; icm invoke-command; iex invoke-expression; ihy invoke-history;
ii invoke-item; ipal import-alias; ipcsv import-csv; ipmo import-module; ipsn import-pssession;
irm invoke-restmethod; ise powershell_ise; iwmi invoke-wmimethod; iwr invoke-webrequest; kill stop-process;
lp out-printer; ls get-childitem; man help; md mkdir; measure measure-object; mi move-item; mount new-psdrive;
move move-item; mp move-itemproperty; mv move-item; nal new-alias; ndr new-psdrive; ni new-item;
nmo new-module; npssc new-pssessionconfigurationfile; nsn new-pssession; nv new-variable; ogv out-gridview;
oh out-host; popd pop-location; ps get-process; pushd push-location; pwd get-location; r invoke-history;
rbp remove-psbreakpoint; rcjb receive-job; rcsn receive-pssession; rd remove-item; rdr remove-psdrive;
ren rename-item; ri remove-item; rjb remove-job; rm remove-item; rmdir remove-item; rmo remove-module;
rni rename-item; rnp rename-itemproperty; rp remove-itemproperty; rsn remove-pssession; rsnp remove-pssnapin;
rujb resume-job; rv remove-variable; rvpa resolve-path; rwmi remove-wmiobject; sajb start-job;
sal set-alias; saps start-process; sasv start-service; sbp set-psbreakpoint; sc set-content;
scb set-clipboard; select select-object; set set-variable; shcm show-command; si set-item; sl set-location;
sleep start-sleep; sls select-string; sort sort-object; sp set-itemproperty; spjb stop-job; spps stop-process;
spsv stop-service; start start-process; stz set-timezone; sujb suspend-job; sv set-variable;
swmi set-wmiinstance; tee tee-object; trcm trace-command; type get-content; wget invoke-webrequest;
where where-object; wjb wait-job; write write-output; % foreach-object; ? where-object;
gcim get-ciminstance; gcls get-cimclass; icim invoke-cimmethod; ncim new-ciminstance; rcim remove-ciminstance;
scim set-ciminstance; ncms new-cimsession; gcms get-cimsession; rcms remove-cimsession; ncso new-cimsessionoption;
rcie register-cimindicationevent
"""

ALIASES: dict[str, str] = {}
for _entry in _ALIAS_TABLE.replace("\n", " ").split(";"):
    _parts = _entry.split()
    if len(_parts) == 2:
        ALIASES[_parts[0]] = _parts[1]

# Static members of these types compute values and touch nothing outside the process.
PURE_TYPES = frozenset(
    {
        "math",
        "io.path",
        "string",
        "char",
        "int",
        "int16",
        "int32",
        "int64",
        "uint32",
        "uint64",
        "long",
        "double",
        "single",
        "float",
        "decimal",
        "bool",
        "boolean",
        "byte",
        "datetime",
        "datetimeoffset",
        "timespan",
        "guid",
        "regex",
        "text.regularexpressions.regex",
        "convert",
        "bitconverter",
        "text.encoding",
        "uri",
        "version",
        "globalization.cultureinfo",
        "stringcomparer",
        "array",
        "linq.enumerable",
        "collections.generic.list[string]",
        "management.automation.wildcardpattern",
        "net.ipaddress",
        "char[]",
        "string[]",
        "int[]",
    }
)
# Instance methods that compute a value from the object and change nothing.
# Automatic variables that hold the engine itself or the session's state: none of their members is
# known to be read-only, whatever its name.
ENGINE_OBJECTS = frozenset(
    {
        "executioncontext",
        "host",
        "pscmdlet",
        "myinvocation",
        "psdefaultparametervalues",
        "psboundparameters",
        "sessionstate",
        "psstyle",
    }
)
PURE_METHODS = frozenset(
    {
        "trim",
        "trimstart",
        "trimend",
        "toupper",
        "tolower",
        "toupperinvariant",
        "tolowerinvariant",
        "split",
        "replace",
        "substring",
        "contains",
        "startswith",
        "endswith",
        "indexof",
        "lastindexof",
        "indexofany",
        "join",
        "format",
        "tostring",
        "gettype",
        "equals",
        "padleft",
        "padright",
        "insert",
        "remove",
        "normalize",
        "tochararray",
        "getstring",
        "getbytes",
        "compareto",
        "gethashcode",
        "adddays",
        "addhours",
        "addminutes",
        "addseconds",
        "addmonths",
        "addyears",
        "tostringinvariant",
        "toshortdatestring",
        "tolongdatestring",
        "toshorttimestring",
        "touniversaltime",
        "tolocaltime",
        "getenumerator",
        "where",
        "foreach",
        "add",
        "toarray",
        "tolist",
        "count",
        "sum",
        "max",
        "min",
        "average",
        "matches",
        "match",
        "ismatch",
        "escape",
        "round",
        "floor",
        "ceiling",
        "abs",
        "pow",
        "sqrt",
        "parse",
        "tryparse",
        "getfilename",
        "getextension",
        "getdirectoryname",
        "getfilenamewithoutextension",
        "combine",
        "getfullpath",
        "isnullorempty",
        "isnullorwhitespace",
        "tobase64string",
        "frombase64string",
        "toint32",
        "toint64",
        "tobyte",
        "newguid",
        "now",
        "utcnow",
        "today",
        "getvalue",
        "containskey",
        "keys",
        "values",
        "clone",
        "reverse",
        "sort",
    }
)


def normalise_name(name: str) -> str:
    """Curly quotes, backtick escapes and surrounding quotes removed: what PowerShell looks up."""
    text = "".join(QUOTES.get(ch, ch) for ch in name)
    text = re.sub(r"`(.)", r"\1", text)
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1]
    return text
