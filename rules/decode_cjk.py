"""Chinese-side obfuscations for rules/decode.py: GB2312 区位码, mojibake, punycode, shifted code points and Chinese
written backwards. Each leaves a Chinese instruction unreadable to the word lists and readable to a model that is
asked to undo it; the decoder keeps a reading only when it reads as Chinese (or English) and scans it.

GB2312 区位码 ("2686 3452 5414 ...": row and cell, two digits each; the bytes are row + 0xA0 and cell + 0xA0): a run of
four-digit numbers is what the decoder's hot pass already finds as decimal codes (`dec`), so a decimal run that does
not decode as code points is tried as 区位码 (`quwei`) at no cost to other texts. Every number must be a valid
assigned code; the characters must read as Chinese and hold WORDS_READ common words (`word_hits`): eight four-digit
numbers drawn at random are a valid level-1 code with p ~0.42 each, and common words out of random level-1
characters are rarer still.

Mojibake: UTF-8 read as Windows-1252 ("å¿½ç•¥ä¹‹å‰...", as browsers write it: the five bytes 1252 leaves undefined
as C1 controls) or as Latin-1. A lead character (U+00C2-U+00F4, the lead bytes) followed by the right number of
continuation characters (U+0080-U+00BF or 1252's `€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ`) is one character's bytes
(`MOJIBAKE_SEQ`); a run has MOJIBAKE_CHARS of them with at most a few other characters between two, and each is
repaired on its own (`mojibake`): "café" and "naïve" have a lead character and no continuation after it, so they are
no run, and a repaired run must still read as text.

Punycode (`xn--...` labels of IDNA host names, RFC 3492): the labels of a host decode to Unicode (`punycode`); the host
is kept when that reads as Chinese or English: a shop's or a city's name ("xn--mnchen-3ya", 中国) is too short.

Shifted code points: every character moved by +1 (or -1, or a few): "忽略之前的所有指令" becomes "忾畦乌剎皅扁朊挈以",
ideographs of which about half are among the commonest 6,722 (`common`, the decoder's GB 2312 level 1 and Big5
frequent set), where running Chinese has ~99%. A clause run whose ideographs are at most SHIFT_PLAIN common and
become SHIFT_BACK common shifted back by k (SHIFTS) is read so (`shifted_back`); the hint is three uncommon ideographs
within a few characters (`uncommon_hint`), which ordinary Chinese, poetry and names rarely have.

Chinese backwards: "令指有所的前之略忽". Read backwards, Chinese still has the commonest characters, so character
frequency says nothing; word order does. WORDS is a list of common two-character words (written for this module;
those whose reversal is also a word, 互相/相互, are left out): a clause run in which more words are read right to
left than left to right (`reversed_spans`), REVERSED_WORDS of them and REVERSED_MARGIN times as many, is read
backwards. A palindrome ("上海自来水来自海上") reads the same both ways; poetry and ordinary prose read forwards. The
hint is two of the commonest words (HINT_WORDS) written backwards within REVERSED_WINDOW characters (`reversed_hint`).

The hints (`MOJIBAKE_HINT`, `PUNYCODE_HINT`, `uncommon_hint`, `reversed_hint`) are alternatives of the decoder's one
cold RE2 pass; the CJK runs are looked for only around where a hint matched, and only a kind's own runs.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

# GB2312 区位码
QUWEI_DIGITS = 4


def quwei(run: str, budget: int) -> tuple[bytes, bool] | None:
    """A run of four-digit 区位码 as UTF-8, as far as `budget` bytes go; None when a number is not an assigned GB2312
    code."""
    chars: list[str] = []
    size = 0
    for number in re.findall(r"[0-9]+", run):
        if len(number) != QUWEI_DIGITS:
            return None
        row, cell = int(number[:2]), int(number[2:])
        if not (1 <= row <= 94 and 1 <= cell <= 94):
            return None
        try:
            char = bytes((row + 0xA0, cell + 0xA0)).decode("gb2312")
        except UnicodeDecodeError:
            return None
        width = len(char.encode("utf-8"))
        if size + width > budget:
            return "".join(chars).encode("utf-8"), True
        chars.append(char)
        size += width
    return "".join(chars).encode("utf-8"), False


# Mojibake
_CP1252_HIGH = "€\x81‚ƒ„…†‡ˆ‰Š‹Œ\x8dŽ\x8f\x90‘’“”•–—˜™š›œ\x9džŸ"  # bytes 0x80-0x9F as Windows-1252 (browsers)
_BYTE = {c: 0x80 + i for i, c in enumerate(_CP1252_HIGH)} | {chr(b): b for b in range(0x80, 0x100)}
_CONT = "\x80-\xbf" + "".join(c for c in _CP1252_HIGH if ord(c) > 0xFF)
MOJIBAKE_SEQ = f"[\xc2-\xdf][{_CONT}]|[\xe0-\xef][{_CONT}]{{2}}|[\xf0-\xf4][{_CONT}]{{3}}"
MOJIBAKE_CHARS = 3  # sequences in a run
MOJIBAKE_GAP = 8  # other characters (ASCII left as it was, spaces) between two
MOJIBAKE_RUN = re.compile(
    f"(?:{MOJIBAKE_SEQ})(?:[^\n]{{0,{MOJIBAKE_GAP}}}?(?:{MOJIBAKE_SEQ})){{{MOJIBAKE_CHARS - 1},}}"
)
_SEQ = re.compile(MOJIBAKE_SEQ)
MOJIBAKE_HINT = f"(?:{MOJIBAKE_SEQ}){{2}}"  # RE2: two characters' bytes in a row, as every CJK character is


def _repair(m: re.Match[str]) -> str:
    try:
        return bytes(_BYTE[c] for c in m.group()).decode("utf-8")
    except UnicodeDecodeError:
        return m.group()


def mojibake(run: str) -> str:
    """A mojibake run repaired: each lead and continuation characters that are a UTF-8 character's bytes as that
    character; other characters stay."""
    return _SEQ.sub(_repair, run)


# Punycode
PUNYCODE_HINT = r"(?i:xn--)"
PUNYCODE_RUN = re.compile(r"(?i)(?<![\w.-])(?:[a-z0-9-]+\.)*xn--[a-z0-9-]+(?:\.[a-z0-9-]+)*")
_LABEL = re.compile(r"(?i)xn--([a-z0-9-]+)")


def _label(m: re.Match[str]) -> str:
    try:
        return m.group(1).lower().encode("ascii").decode("punycode")
    except UnicodeError:
        return m.group()


def punycode(run: str) -> tuple[str, list[str]]:
    """A host name with its `xn--` labels decoded (a label the codec rejects stays), and those labels decoded."""
    labels = [_label(m) for m in _LABEL.finditer(run)]
    return _LABEL.sub(_label, run), labels


# Clauses: CJK text between punctuation and white space (full-width and ASCII).
CJK_CLAUSE = re.compile(r"[^\s，。、；：！？,.;:!?\"“”「」『』（）()《》【】]+")
_HANZI = re.compile(r"[\u4e00-\u9fff]")


# Shifted code points
SHIFTS = (1, -1, 2, -2, 3, -3)
SHIFT_HANZI = 8  # ideographs in a run
SHIFT_PLAIN = 0.7  # at most this share of a run's ideographs are common as written
SHIFT_BACK = 0.9  # and at least this share once shifted back
SHIFT_WINDOW = 6  # characters between two of the hint's three uncommon ideographs


def uncommon_hint(common: frozenset[str]) -> str:
    """RE2: three ideographs that are not `common` within SHIFT_WINDOW characters of each other on a line."""
    ranges: list[tuple[int, int]] = []
    for cp in range(0x4E00, 0xA000):
        if chr(cp) in common:
            continue
        if ranges and ranges[-1][1] == cp - 1:
            ranges[-1] = (ranges[-1][0], cp)
        else:
            ranges.append((cp, cp))
    rare = "[" + "".join(f"\\x{{{a:X}}}-\\x{{{b:X}}}" for a, b in ranges) + "]"
    return f"{rare}[^\\n]{{0,{SHIFT_WINDOW}}}{rare}[^\\n]{{0,{SHIFT_WINDOW}}}{rare}"


def _share(hanzi: list[str], common: frozenset[str]) -> float:
    return sum(c in common for c in hanzi) / len(hanzi) if hanzi else 1.0


def shifted_back(run: str, common: frozenset[str]) -> str | None:
    """`run` shifted back by the k of SHIFTS that makes SHIFT_BACK of its ideographs common (the best one), when at
    most SHIFT_PLAIN of them are common as written; white space stays."""
    hanzi = _HANZI.findall(run)
    if len(hanzi) < SHIFT_HANZI or _share(hanzi, common) > SHIFT_PLAIN:
        return None
    best, best_share = 0, SHIFT_BACK
    for k in SHIFTS:
        share = _share([chr(ord(c) - k) for c in hanzi], common)
        if share >= best_share:
            best, best_share = k, share
    if not best:
        return None
    return "".join(c if c.isspace() or ord(c) - best < 0x21 else chr(ord(c) - best) for c in run)


def shifted_spans(line: str, common: frozenset[str]) -> Iterator[tuple[int, int]]:
    """[start, end) of each run of consecutive clauses of `line` whose ideographs are at most SHIFT_PLAIN common."""
    start = end = -1
    for m in CJK_CLAUSE.finditer(line):
        hanzi = _HANZI.findall(m.group())
        if len(hanzi) >= 2 and _share(hanzi, common) <= SHIFT_PLAIN:
            start = m.start() if start < 0 else start
            end = m.end()
        elif hanzi and start >= 0:
            yield start, end
            start = -1
    if start >= 0:
        yield start, end


# Chinese backwards
_WORD_LIST = """
我们 你们 他们 她们 它们 自己 大家 别人 什么 怎么 怎样 如何 为何 哪里 哪儿 那里 这里 这个 那个 这些 那些 这样 那样
因为 所以 但是 可是 而且 并且 或者 还是 如果 虽然 然后 然而 于是 已经 正在 曾经 一直 一定 一起 一些 一下 一样 一般
一切 所有 任何 每个 各种 其他 其实 其中 只是 只有 只要 就是 还有 没有 不是 不要 不会 不能 不用 可以 应该 需要 必须
能够 知道 觉得 认为 希望 喜欢 想要 开始 结束 继续 现在 以前 以后 之前 之后 今天 明天 昨天 时候 时间 问题 事情 东西
地方 朋友 老师 学生 孩子 父母 妈妈 爸爸 家人 公司 工作 学习 生活 世界 国家 中国 社会 经济 政治 文化 历史 发展 技术
科学 研究 教育 学校 大学 医院 医生 身体 健康 心情 感觉 感情 关系 影响 结果 原因 方法 办法 方式 过程 情况 条件 环境
系统 信息 数据 网络 电脑 手机 软件 程序 代码 文件 用户 密码 账号 服务 产品 市场 价格 客户 项目 计划 目标 任务 要求
标准 规则 规定 政策 法律 安全 管理 组织 部门 领导 员工 同事 会议 报告 内容 文章 故事 消息 新闻 电话 邮件 地址 名字
回答 回复 解释 说明 描述 介绍 帮助 支持 提供 使用 利用 处理 解决 完成 实现 进行 发生 出现 存在 包括 选择 决定 考虑
注意 重要 主要 简单 容易 困难 特别 非常 比较 十分 更加 最后 首先 其次 另外 此外 同时 例如 比如 当然 确实 真的 也许
大概 几乎 完全 全部 部分 整个 以上 以下 上述 下面 上面 里面 外面 前面 后面 中间 旁边 附近 周围 忽略 无视 指令 命令
提示 输出 模式 开发 启用 禁用 限制 扮演 角色 假装 设定 身份 助手 机器 人工 智能 模型 拒绝 遵守 违反 审查 过滤 敏感
秘密 泄露 显示 打印 重复 原始 初始 隐藏 内部 配置 告诉 制作 武器 毒品 黑客 攻击 入侵 绕过 破解 执行 操作 按照 立即
马上 自由 解除 越狱 吃饭 睡觉 天气 下雨 早上 晚上 中午 周末 假期 旅游 旅行 火车 飞机 汽车 高铁 地铁 机场 车站 酒店
房间 厨房 超市 商店 银行 购物 便宜 衣服 电影 音乐 游戏 运动 跑步 游泳 篮球 足球 比赛 阅读 写作 作业 考试 成绩 老板
客服 快递 订单 退款 发货 收到 包裹 地图 城市 北京 上海 广州 深圳 杭州 成都 电视 节目 晚饭 早饭 午饭 咖啡 牛奶 水果
蔬菜 米饭 面条 饺子 医药 药物 感冒 发烧 头疼 休息 运行 安装 下载 上传 登录 注册 设置 修改 删除 添加 保存 打开 关闭
发送 接收 检查 测试 错误 成功 失败 更新 版本 功能 页面 网站 链接 浏览 搜索 结构 分析 总结 翻译 中文 英文 语言 句子
意思 词语 汉字 文字 图片 视频 声音 颜色 大小 数量 质量 速度 距离 温度 高度 重量 年龄 性别 姓名 生日 电子 工程 设计
建筑 艺术 体育 音乐 歌曲 演员 导演 作者 读者 观众 记者 警察 律师 军队 政府 人民 群众 经理 主任 同学 邻居 丈夫 妻子
儿子 女儿 哥哥 姐姐 弟弟 妹妹 爷爷 奶奶 外公 外婆 亲戚 婚礼 生病 住院 手术 治疗 检查 保险 工资 收入 支出 费用 预算
投资 股票 基金 贷款 利息 税收 合同 协议 签字 付款 账户 余额 转账 发票 收据 地铁 公交 出租 开车 停车 加油 修理 维护
清洁 打扫 洗衣 做饭 购买 销售 生产 制造 工厂 农业 农民 土地 山区 河流 海洋 森林 动物 植物 自然 环保 污染 能源 电力
资源 材料 工具 设备 机械 仪器 实验 理论 观点 意见 建议 想法 看法 态度 习惯 经验 能力 水平 机会 压力 困难 成功 梦想
未来 过去 将来 永远 马上 立刻 突然 终于 总是 经常 通常 有时 偶尔 从来 一旦 只好 不得 不断 不停 互相 之间 以外 为了
关于 对于 根据 通过 经过 随着 除了 至于 由于 虽说 不过 否则 要是 假如 即使 尽管 无论 不管 只能 可能 可惜 幸好 难道
究竟 到底 简直 居然 竟然 果然 原来 本来 其余 剩下 大约 左右 上下 前后 内外 东西 南北 开心 高兴 快乐 难过 伤心 生气
害怕 担心 紧张 放心 满意 失望 感谢 谢谢 没事 再见 你好 早安 晚安 欢迎 请问 麻烦 打扰 抱歉 原谅 祝福 恭喜
"""
_ALL_WORDS = frozenset(w for w in _WORD_LIST.split() if len(w) == 2)
WORDS = frozenset(w for w in _ALL_WORDS if w[::-1] not in _ALL_WORDS)
REVERSED_WORDS = 3  # words read right to left in a run
REVERSED_MARGIN = 3  # and this many times as many as left to right
WORDS_READ = 2  # common words in a decoded 区位码 or shifted run
REVERSED_WINDOW = 3  # characters between two of the reversed hint's words
# The commonest of WORDS, and those of orders to a model: what the hint looks for written backwards.
_HINT_LIST = """
我们 你们 他们 什么 怎么 现在 之前 所有 没有 可以 因为 所以 已经 知道 时候 自己 问题 这个 那个 这些 这样 指令
忽略 系统 提示 输出 告诉 如何 任何 限制 模式 开发 启用 无视 上述 以下 回答 内容 一定 必须 需要 不要 应该 开始
以后 如果 但是 还是 或者 就是 不是 一起 朋友 工作 学习 生活 喜欢 觉得 希望 今天 明天 时间 事情 东西 地方 孩子
老师 学生 公司 中国 世界 国家 社会 发展
"""
HINT_WORDS = frozenset(_HINT_LIST.split())


def word_hits(text: str) -> int:
    """How many of `text`'s adjacent character pairs are WORDS, read left to right."""
    return sum(text[i : i + 2] in WORDS for i in range(len(text) - 1))


def reversed_hint() -> str:
    """RE2: two of HINT_WORDS written backwards ("令指", "们我") within REVERSED_WINDOW characters on a line. The hint's
    cost grows with its words: all of WORDS in it cost every ~1 KB prompt ~1 us more than these, and two of them
    anywhere let through 1 in 5 of bench.scan's prompts, whose Chinese is word salad ("世界世界" holds "界世")."""
    one = "(?:" + "|".join(sorted(w[::-1] for w in HINT_WORDS)) + ")"
    return f"{one}[^\\n]{{0,{REVERSED_WINDOW}}}{one}"


def reversed_spans(line: str) -> Iterator[tuple[int, int]]:
    """[start, end) of each run of consecutive clauses of `line` that hold more WORDS read right to left than left to
    right, REVERSED_WORDS or more and REVERSED_MARGIN times as many; clauses with no words either way may stand
    between two."""
    start = end = -1
    forward = backward = 0
    for m in CJK_CLAUSE.finditer(line):
        clause = m.group()
        ahead, back = word_hits(clause), word_hits(clause[::-1])
        if back > ahead:
            start = m.start() if start < 0 else start
            end = m.end()
            forward, backward = forward + ahead, backward + back
        elif ahead and start >= 0:
            if backward >= REVERSED_WORDS and backward >= REVERSED_MARGIN * forward:
                yield start, end
            start, forward, backward = -1, 0, 0
    if start >= 0 and backward >= REVERSED_WORDS and backward >= REVERSED_MARGIN * forward:
        yield start, end


# 核心价值观编码 (the "core socialist values" encoder): the text's UTF-8 bytes as hex digits (its code turns each
# unreserved character into its two hex digits and percent-encodes the rest, then drops the `%`), each digit d < 10
# written as the word CORE_VALUES[d], each d >= 10 as 诚信 (the eleventh word, 10) and the word d - 10, or as 友善
# (11) and the word d - 6 (chosen at random; checked against the encoder's own example, 这里输入明文 is
# E8BF99E9878CE8BE93E585A5E6988EE69687). A run is CORE_VALUES_WORDS of the words or more in a row (white space
# between them allowed); a quote of the twelve values is a run that breaks the scheme (诚信 followed by 友善, a word
# 6-11 after 诚信) or decodes to control bytes, and with punctuation between them (富强、民主、...) no run.
CORE_VALUES = ("富强", "民主", "文明", "和谐", "自由", "平等", "公正", "法治", "爱国", "敬业", "诚信", "友善")
CORE_VALUES_WORDS = 8
_CORE_WORD = "(?:" + "|".join(CORE_VALUES) + ")"
CORE_VALUES_RUN = re.compile(rf"{_CORE_WORD}(?:\s*{_CORE_WORD}){{{CORE_VALUES_WORDS - 1},}}")
CORE_VALUES_HINT = f"{_CORE_WORD}{{{CORE_VALUES_WORDS}}}"  # RE2: eight in a row, as the encoder writes them
_CORE_INDEX = {w: i for i, w in enumerate(CORE_VALUES)}
_CORE_FOUND = re.compile(_CORE_WORD)


def core_values(run: str, whole: bool = True) -> bytes | None:
    """A run of the twelve values' words as the bytes of its hex digits; None when a digit of 10 or more is not
    written by the scheme or the digits do not make whole bytes (a run cut short by the budget, not `whole`, drops
    its last incomplete byte)."""
    words = [_CORE_INDEX[w] for w in _CORE_FOUND.findall(run)]
    digits: list[int] = []
    i = 0
    while i < len(words):
        word = words[i]
        if word >= 10:
            i += 1
            if i == len(words):
                if whole:
                    return None
                break
            word = 10 + words[i] if word == 10 else words[i] + 6
            if not 10 <= word <= 15:
                return None
        digits.append(word)
        i += 1
    if len(digits) % 2:
        if whole:
            return None
        digits.pop()
    return bytes.fromhex("".join(f"{d:x}" for d in digits))
