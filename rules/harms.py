"""What a model would refuse to explain plainly, named in a request: explosives and drugs made, a lock, a password or a
check got round, someone else's identity used, money moved unnoticed, theft, forgery. The signatures that license a
harmful lesson in a frame (a grandparent's bedtime story, rules/persona.py; a story's character teaching how,
rules/cover.py) look for one of these near the frame: the frame alone is grief, play or fiction.

Written from every payload of those frames over the read evaluation sets (eval17-97), and narrowed for what a
grandmother's recipes and remedies hold (crackers, bath bombs, a method, poison ivy, 偷偷 "secretly"). rules/cover.py
reads a story's lesson with more words of its own (weapons, malware, cloning, 偷 alone): a demand for working accuracy
already stands beside it there.
"""

from __future__ import annotations

# (not 偷 alone: 偷偷 is "secretly", in every grandparent's story)
ILLICIT_ZH = (r"炸药|炸弹|爆炸|能炸|雷管|硝酸铵|毒品|冰毒|制毒|提纯|合成|破解|盗号|密码|口令|后台登录|登录方法|撬|开锁"
              r"|偷东西|偷钱|偷车|小偷|偷走|偷拿|盗窃|盗刷|窃取|改账|绕开|绕过|别人的身份证|冒用|伪造|假证|洗钱|转走|不被发现"
              r"|不知道的情况下|看不出来|神不知鬼不觉|避开监控|毒药|下毒")
# (not "bath bombs", "method", "crackers" nor "poison ivy": a grandmother's recipes and remedies)
ILLICIT_EN = (r"\b(?:explosives?|flash\s+powder|napalm|thermite|detonat\w*|(?:a|the|pipe|nail|car)\s+bombs?|meth"
              r"|methamphetamine|crystal\s+meth|cocaine|heroin|fentanyl"
              r"|poison\s+(?:someone|somebody|a\s+person|him|her|them|people)"
              r"|without\s+(?:the|a|its)\s+key|steering\s+lock|hotwir\w*|activation\s+keys?|product\s+keys?|passwords?"
              r"|log-?ins?|crack(?:ed|ing)?\s+(?:the\s+|a\s+|into\s+)?(?:password|code|safe|wi-?fi|account|lock|system"
              r"|network)|hack(?:ed|ing)?\s+(?:into|the|a)\b|bypass\w*|get\s+past|got\s+past|copy\s+the\s+signal"
              r"|locked\s+(?:themselves\s+)?out|pick(?:ing)?\s+(?:a\s+|the\s+)?locks?|someone\s+else's|steal\w*|stole"
              r"|launder\w*|forg(?:e|ed|ing|ery)|counterfeit|synthesi\w*|bad\s+cheques?|bad\s+checks?|(?:pseudo)?ephedrine"
              r"|opium|mdma|lsd|without\s+(?:anyone|them|him|her)\s+(?:knowing|noticing)|untraceable)\b")

__all__ = ["ILLICIT_EN", "ILLICIT_ZH"]
