"""Corrections for naming cultures guessit was not written for: Chinese fansub and web names
(`【组】★10月新番[中文/English][07]`, `第12话`, `[01-24完]`, `[全24集]`), names led by a broadcast date
(`230415 Show ep12`), Turkish and Dutch episode words (`45. Bölüm`, `Se.2 afl.5`), a date's day
before its month (`2019.24.05`), a title that begins with a year, and a tracker's `+ Original`.
"""

from __future__ import annotations

import re
from datetime import date

from jellybit.core.release_fixes.common import (
    BRACKET,
    LEAD_GROUP,
    TAG,
    Guess,
    Reading,
    base_name,
    is_latin,
    note,
)

_CJK = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af"
_HAS_CJK = re.compile(f"[{_CJK}]")
_CHINESE_NUMBERS = {c: i for i, c in enumerate("零一二三四五六七八九十", start=0)}
# `★10月新番★`, `【4月新番】`, `[2022年7月番]`: when the fansub aired, not a title
_ANNOUNCE = re.compile(r"[★☆]?\s*(?:\d{4}年)?(?:\d{1,2}|[一二三四五六七八九十]{1,3})月(?:新番|番)\s*[★☆]?|"
                       r"[★☆][^★☆\[\]【】]{0,12}[★☆]|[★☆]")
_CN_EPISODE = re.compile(r"第\s*(\d{1,4})\s*[话話集回]|[\[【［](\d{1,4})\s*[话話集回][\]】］]")
_CN_RANGE = re.compile(r"[\[【［](\d{1,4})\s*[-~～]\s*(\d{1,4})\s*(?:完|END|Fin)?[\]】］]", re.I)
_CN_ALL = re.compile(r"全\s*(\d{1,4})\s*[话話集回]")
_CN_SEASON = re.compile(r"第\s*(\d{1,2}|[一二三四五六七八九十]{1,3})\s*[季期]|"
                        r"(?<![A-Za-z])S(\d{1,2})(?![\dA-Za-z])")
_NUMBER_LIKE = re.compile(r"^\s*(?:第?\s*\d{1,4}\s*(?:[话話集回]|完|END|v\d)?|全\s*\d+\s*[话話集回]|"
                          r"\d{1,4}\s*[-~～]\s*\d{1,4}\s*完?)\s*$", re.I)


def _chinese_number(text: str) -> int | None:
    if text.isdigit():
        return int(text)
    if text == "十":
        return 10
    if len(text) == 1:
        return _CHINESE_NUMBERS.get(text)
    if text.startswith("十"):
        return 10 + _CHINESE_NUMBERS.get(text[1], 0)
    if text.endswith("十"):
        return 10 * _CHINESE_NUMBERS.get(text[0], 0)
    return None


def _split_titles(text: str) -> list[str]:
    """`中文标题 / English Title`, `中文标题_English`, `天国大魔境 Tengoku Daimakyou`: each title once."""
    parts = [p for p in re.split(r"\s*/\s*|(?<=[" + _CJK + r"])_(?=[A-Za-z])", text) if p.strip()]
    out: list[str] = []
    for part in parts:
        mixed = re.match(rf"^([{_CJK}][^A-Za-z]*?)\s+([A-Za-z][^{_CJK}]*)$", part.strip())
        out.extend([mixed.group(1), mixed.group(2)] if mixed else [part])
    return [" ".join(p.split()).strip(" -_·") for p in out if p.strip(" -_·")]


def _strip_season(title: str) -> str:
    return " ".join(_CN_SEASON.sub(" ", title).split()).strip(" -")


# What a title guessit or the other corrections found may not be: a bracket, an airing note, a category,
# a resolution
_NOT_A_TITLE = re.compile(r"[\[\]【】［］★☆]|月新?番|^\d{3,4}[xX×]\d{3,4}$|"
                          r"^(?:国漫|国产|日剧|美剧|韩剧|动画|动漫|剧场版|\d+年\S{0,3})$")
# Where the title written after the group ends: a bracket, ` - 07`, ` 07 `, `第07话`, `#13`
_TITLE_END = re.compile(r"[\[【［(]|\s-\s*\d|(?<=\S)\s\d{1,4}(?:v\d)?(?:\s|$)|第\s*\d|\s#\d|"
                        rf"(?<=[{_CJK}）])-\d")


def _written_titles(rest: str) -> tuple[list[str], bool]:
    """The titles after the group, and whether they were written outside brackets."""
    prefix = _TITLE_END.split(rest.strip())[0].strip()
    candidate = prefix or None
    if candidate is None:
        for match in BRACKET.finditer(rest):
            content = match.group(1).strip()
            skip = TAG.match(content) or _NUMBER_LIKE.match(content) or _NOT_A_TITLE.search(content)
            if content and not skip:
                candidate = content
                break
    if not candidate or TAG.match(candidate):
        return [], False
    titles = [t for t in (_strip_season(t) for t in _split_titles(candidate)) if t and not TAG.match(t)]
    return sorted(titles, key=lambda t: not is_latin(t)), bool(prefix)


def fix_cjk_fansub(r: Reading, guess: Guess) -> None:
    """`【某字幕组】★10月新番[中文标题/English Title][07][1080P]`, `[ANi] 身为 VTuber 的我… - 01 [Baha]`: the
    titles are what follows the group up to the number, else the first bracket that is neither an airing
    note, a category, a tag nor a number; the Latin one leads. Only where the title read is missing, is a
    tag, or is not (or only part of) what is written there."""
    base = base_name(r["text"])
    lead = LEAD_GROUP.match(base)
    title = (r["title"] or "").strip()
    if not lead or not (_HAS_CJK.search(base) or (not title and base.lstrip().startswith("["))):
        return
    rest = _ANNOUNCE.sub(" ", base[lead.end():])
    titles, written = _written_titles(rest)
    if not titles and not title and not TAG.match(lead.group(1)):
        titles = [lead.group(1).strip()]       # `[Gal to Kyouryuu][02][BDRIP]`: no group, the title first
    if not titles or _NOT_A_TITLE.search(titles[0]) or title in titles:
        return
    bad = not title or bool(_NOT_A_TITLE.search(title) or TAG.match(title)) or title == lead.group(1).strip()
    # a title written in CJK after the group is the name's; guessit's reading of a Latin one stands
    written = written and any(_HAS_CJK.search(t) for t in titles)
    outside = written and not any(title in t for t in titles)
    truncated = written and any(title in t and title != t for t in titles)
    if not (bad or outside or truncated):
        return
    season = _CN_SEASON.search(rest)
    if season and not r["seasons"]:
        number = _chinese_number(season.group(1) or season.group(2) or "")
        if number:
            r["seasons"] = [number]
            if r["absolute_episodes"] and not r["episodes"]:
                r.update(episodes=r["absolute_episodes"], absolute_episodes=[])
    r.update(title=titles[0], alternative_titles=titles[1:])
    note(r, "cjk_fansub")


# `[Sakurato] Tonikaku Kawaii S2 [01]`, `[梦蓝字幕组]New Doraemon 哆啦A梦新番[747][2023.02.25]`
_BRACKET_NUMBER = re.compile(r"[\[【［](\d{1,4})(?:v\d)?[\]】］]")
_NOT_EPISODE = {480, 576, 720, 1080, 1440, 2160, 4320}


def fix_bracket_number(r: Reading, guess: Guess) -> None:
    """`[Grp] Title S2 [01][1080p]`, `[Grp]Title[747][2023.02.25]`: a bracketed number after a fansub title
    read as nothing → the episode (of the season the name gives, else absolute)."""
    base = base_name(r["text"])
    if not LEAD_GROUP.match(base) or r["episodes"] or r["absolute_episodes"]:
        return
    for match in _BRACKET_NUMBER.finditer(base):
        number = int(match.group(1))
        if number in _NOT_EPISODE or 1900 <= number <= 2100 or match.start() == 0:
            continue
        if r["seasons"]:
            r["episodes"] = [number]
        else:
            r["absolute_episodes"] = [number]
        r.update(type="episode")
        note(r, "bracket_number")
        return


def fix_cjk_numbers(r: Reading, guess: Guess) -> None:
    """`[第12话]`, `[01-24完]`, `[全24集]`: a Chinese episode, range or whole-series count."""
    base = base_name(r["text"])
    if not _HAS_CJK.search(base) and not re.search(r"[\[【]\d{1,4}\s*[-~]\s*\d{1,4}\s*完", base):
        return
    episode, span, whole = _CN_EPISODE.search(base), _CN_RANGE.search(base), _CN_ALL.search(base)
    kept = [a for a in r["alternative_titles"] if not _NUMBER_LIKE.match(a)]
    if kept != r["alternative_titles"]:
        r["alternative_titles"] = kept
        note(r, "cjk_numbers")
    numbers: list[int] = []
    if whole:
        numbers = list(range(1, int(whole.group(1)) + 1))
        r["batch"] = True
    elif span and int(span.group(1)) < int(span.group(2)) <= 2000:
        # a range alone keeps the contract's reading of `[01-26][合集]`: several episodes, no pack
        numbers = list(range(int(span.group(1)), int(span.group(2)) + 1))
    elif episode and not (r["episodes"] or r["absolute_episodes"]):
        numbers = [int(episode.group(1) or episode.group(2))]
    if not numbers:
        return
    if r["seasons"]:
        r.update(episodes=numbers, absolute_episodes=[])
    else:
        r.update(absolute_episodes=numbers, episodes=[])
    r.update(type="episode", air_date=None if whole or span else r["air_date"])
    r["alternative_titles"] = [a for a in r["alternative_titles"] if not _NUMBER_LIKE.match(a)]
    note(r, "cjk_numbers")


# `230415 Show Name ep12.mp4`: a broadcast date (YYMMDD) before the title
_DATE_LED = re.compile(r"^\s*(\d{2})(\d{2})(\d{2})[ ._-]+(?=\D)")


def fix_date_led(r: Reading, guess: Guess) -> None:
    """`230415 Show Name ep12.mp4`: a name led by its broadcast date as YYMMDD."""
    base = base_name(r["text"])
    match = _DATE_LED.match(base)
    if not match:
        return
    try:
        aired = date(2000 + int(match.group(1)), int(match.group(2)), int(match.group(3)))
    except ValueError:
        return
    rest = base[match.end():]
    title = r["title"] or ""
    stamp = match.group(0).strip(" ._-")
    if title.startswith(stamp):
        title = title[len(stamp):].strip(" ._-")
    r.update(air_date=aired.isoformat(), title=title or r["title"], type="episode")
    if not re.search(r"(?i)(?<![a-z])(?:s\d|season)", rest):
        r.update(seasons=[1] if r["episodes"] else [], season_assumed=bool(r["episodes"]))
    note(r, "date_led")


# `Show 45. Bölüm`, `Show.45.BLM`, `Show Se.2 afl.5`, `Show afl.6-7`
_WORD_EPISODE = re.compile(r"(?i)(?<!\d)(\d{1,4})\s*\.?\s*(?:bölüm|bolum|blm)(?![a-z])|"
                           r"(?<![a-z])afl(?:evering)?[ .]*(\d{1,4})(?:\s*-\s*(\d{1,4}))?(?!\d)")
_WORD_SEASON = re.compile(r"(?i)(?<![a-z])(?:se|seizoen|sezon)[ .]*(\d{1,2})(?!\d)")


def fix_episode_words(r: Reading, guess: Guess) -> None:
    """`45. Bölüm`/`45.BLM` (Turkish), `Se.2 afl.5`/`afl.6-7` (Dutch): the episode by its word."""
    base = base_name(r["text"])
    match = _WORD_EPISODE.search(base)
    if not match:
        return
    low = int(match.group(1) or match.group(2))
    high = int(match.group(3) or low)
    if high < low or high > low + 100:
        return
    season = _WORD_SEASON.search(base)
    if season:
        r.update(seasons=[int(season.group(1))], season_assumed=False)
    elif not r["seasons"] or r["seasons"] == [low]:
        r.update(seasons=[1], season_assumed=True)
    r.update(episodes=list(range(low, high + 1)), absolute_episodes=[], type="episode", part=None)
    if r["title"]:
        cut = re.split(r"(?i)\s+(?:\d{1,4}\s*$|se\s*\d|afl)", r["title"])[0].strip(" -.")
        r["title"] = cut or r["title"]
    note(r, "episode_words")


# `Title.2019.24.05`: the day before the month when the middle cannot be a month
_YEAR_DAY_MONTH = re.compile(r"(?<!\d)((?:19|20)\d{2})[ ._-](\d{2})[ ._-](\d{2})(?!\d)")
# `Title.190311.720p`: six digits alone, read as YYMMDD
_SIX = re.compile(r"(?<=[ ._])(\d{2})(\d{2})(\d{2})(?=[ ._]|$)")


def fix_day_month(r: Reading, guess: Guess) -> None:
    """`Title.2019.24.05` is 24 May 2019; `Title.190311` is 11 March 2019 (YYMMDD, as broadcasters write)."""
    base = base_name(r["text"])
    aired = None
    match = _YEAR_DAY_MONTH.search(base)
    if match and int(match.group(2)) > 12:
        try:
            aired = date(int(match.group(1)), int(match.group(3)), int(match.group(2)))
        except ValueError:
            return
    elif not match and (six := _SIX.search(base)) and not re.search(r"(?i)(?<![a-z])(?:s\d|e\d|ep)", base):
        try:
            aired = date(2000 + int(six.group(1)), int(six.group(2)), int(six.group(3)))
        except ValueError:
            return
        if r["air_date"] is None:
            return      # guessit did not see a date there at all: a bare number, not ours to read
    if aired is None or r["air_date"] == aired.isoformat():
        return
    r.update(air_date=aired.isoformat(), type="episode", absolute_episodes=[], episodes=[])
    if r["year"] == aired.year:
        r["year"] = None
    note(r, "day_month")


def fix_dated_numbers(r: Reading, guess: Guess) -> None:
    """`1923.Evening.Show.2019.03.11`: a year leading a dated name is the title's; in `Show.2019.03.11/…`
    the date's month is no episode, nor its year the show's."""
    if not r["air_date"]:
        return
    base = base_name(r["text"])
    changed = False
    year = r["year"]
    lead = re.match(r"^\s*((?:19|20)\d{2})[ ._]", base)
    if year is not None and lead and int(lead.group(1)) == year and str(year) != r["air_date"][:4]:
        r.update(title=f"{year} {r['title'] or ''}".strip(), year=None, type="episode")
        changed = True
    month, day = int(r["air_date"][5:7]), int(r["air_date"][8:10])
    marked = re.search(r"(?i)(?<![a-z])(?:s\d{1,4}e\d|e\d|ep|episode|\d{1,2}x\d)", r["text"])
    if r["episodes"] and set(r["episodes"]) <= {month, day} and not marked:
        r.update(episodes=[], seasons=[] if r.get("season_assumed") or not marked else r["seasons"])
        changed = True
    # the year only ever written as the date's (`Show.2019.03.11/Show.2019.03.11.mkv`), not `Show (2021)`
    in_date = len(re.findall(rf"(?<!\d){year}[ ._-]\d{{2}}[ ._-]\d{{2}}(?!\d)", r["text"]))
    if year is not None and str(year) == r["air_date"][:4] and in_date == len(
            re.findall(rf"(?<!\d){year}(?!\d)", r["text"])):
        r["year"] = None     # the date's year, not the show's
        changed = True
    if changed:
        note(r, "dated_numbers")


# `Название / Original Title / S2E1-10 of 10 [2023, WEB-DL 1080p] + Original`: what a tracker adds after
_TRACKER_TAIL = re.compile(r"\s\+\s*([^\[\]()/+]{1,40})$")


def fix_tracker_tail(r: Reading, guess: Guess) -> None:
    """`… [2023, WEB-DL 1080p] + Original` (or `+ Sub`): a tracker's note on the extra tracks, no title."""
    match = _TRACKER_TAIL.search(base_name(r["text"]))
    if not match or not r["title"] or r["title"].strip() != match.group(1).strip():
        return
    titles = [t for t in r["alternative_titles"] if t != r["title"]]
    if not titles:
        return
    r.update(title=titles[0], alternative_titles=titles[1:])
    note(r, "tracker_tail")


# `Show 1x01-x03`, `Title 1-24 (Dual Audio)`
_X_RANGE = re.compile(r"(?i)(?<!\d)(\d{1,2})x(\d{1,3})-(?:0*\1)?x(\d{1,3})(?!\d)")
_BATCH_SPAN = re.compile(r"(?i)^(?:\s*[\[【][^\]】]*[\]】])?\s*(?P<title>[^\d\[\]()【】]+?)[ ._-]+"
                         r"(\d{1,3})-(\d{1,3})[ ._]*[(\[](?:dual[ ._-]?audio|batch|complete)")


def fix_x_range(r: Reading, guess: Guess) -> None:
    """`Show 1x01-x03` read as episode 1, `Show 1x01-1x03` as episodes 1 and 3 → episodes 1 to 3."""
    x_range = _X_RANGE.search(base_name(r["text"]))
    if x_range:
        low, high = int(x_range.group(2)), int(x_range.group(3))
        if low < high <= low + 50:
            r.update(seasons=[int(x_range.group(1))], episodes=list(range(low, high + 1)), type="episode")
            note(r, "x_range")


def fix_batch_span(r: Reading, guess: Guess) -> None:
    """`Title 1-24 (Dual Audio)`, `[Grp] Title 1-24 [Dual-Audio]` read as title `Title 1`, absolute 24 (or as
    episodes, no batch) → a batch of absolute 1 to 24."""
    batch = _BATCH_SPAN.match(base_name(r["text"]))
    if batch:
        low, high = int(batch.group(2)), int(batch.group(3))
        if 0 < low < high <= 2000:
            r.update(title=batch.group("title").replace(".", " ").strip(" -"), episodes=[],
                     absolute_episodes=list(range(low, high + 1)), type="episode", batch=True,
                     alternative_titles=[a for a in r["alternative_titles"] if not a.strip().isdigit()])
            note(r, "batch_span")


# `劇場版 呪術廻戦 0`, `Gekijouban Naruto 3`, `Title Movie`: a film; `合集`, `Complete Batch`: a collection
_FILM_BEFORE = re.compile(r"(?i)^(?:劇場版|剧场版|电影版|電影版|gekijouban)\s*")
_FILM_AFTER = re.compile(r"(?i)(?<!\bthe)\s+(?:movie|劇場版|剧场版)$|(?<=[" + _CJK + r"])(?:劇場版|剧场版)$")
_COLLECTION_AFTER = re.compile(r"(?i)\s*(?:合集|全集|总集篇|總集篇|特典|全\s*\d{1,4}\s*[话話集])$|"
                               r"\s+complete\s+batch$|\s+batch$")


def fix_work_words(r: Reading, guess: Guess) -> None:
    """`[Grp] 劇場版 呪術廻戦 0`, `Gekijouban Naruto 3`, `Anime Title Movie` (a film: the word is no title,
    the number is the title's); `葬送的芙莉莲合集`, `Violet Evergarden Complete Batch`, `迷宫饭 全24话` (a
    collection: the word is no title)."""
    title = r["title"]
    if not title or not LEAD_GROUP.match(base_name(r["text"])):
        return
    before, after = _FILM_BEFORE.search(title), _FILM_AFTER.search(title)
    if before or after:
        film = _FILM_BEFORE.sub("", _FILM_AFTER.sub("", title)).strip()
        numbers = r["absolute_episodes"] or r["episodes"]
        base = base_name(r["text"])
        if film and len(numbers) == 1 and not r["seasons"] and re.search(
                rf"{re.escape(film)}[ ._]+0*{numbers[0]}(?!\d)", base):
            film = f"{film} {numbers[0]}"
            r.update(absolute_episodes=[], episodes=[])
        if film and not (r["absolute_episodes"] or r["episodes"] or r["seasons"]):
            r.update(title=film, type="movie")
            note(r, "work_words")
        return
    if collection := _COLLECTION_AFTER.search(title):
        kept = title[: collection.start()].strip(" -")
        if kept:
            r.update(title=kept, batch=True, type="episode", other=[*r["other"], "Complete"])
            note(r, "work_words")


# `(T)Raumschiff.Surprise.2004`, `Ghost in the Shell 2.0 (2008)`: title characters guessit drops
_LETTER_PREFIX = re.compile(r"^\s*\(([A-Za-z])\)(?=[A-Za-z])")
_VERSION_AFTER = re.compile(r"^(?P<title>.+?)[ .](?P<version>\d\.\d)[ .]*\((?:19|20)\d{2}\)")


_CAP_NUMBER = re.compile(r"(?i)\bcap[ .]*(\d)(\d{2})\b|\bcap[ .]*(\d{2})(\d{2})\b")


def fix_cap_absolute(r: Reading, guess: Guess) -> None:
    """`Cap.1207` is season 12 episode 7: its digits are no absolute number beside."""
    match = _CAP_NUMBER.search(base_name(r["text"]))
    if match and r["absolute_episodes"] and r["seasons"] and r["episodes"]:
        number = int(match.group(0).lower().split("cap")[1].strip(" ."))
        if r["absolute_episodes"] == [number]:
            r["absolute_episodes"] = []
            note(r, "cap_absolute")


def fix_title_marks(r: Reading, guess: Guess) -> None:
    """`(T)Raumschiff.Surprise.2004` keeps its `(T)`; `Ghost in the Shell 2.0 (2008)` its `2.0`; a Korean
    broadcast name's `제목 <부제>` is a title and an alternative."""
    base = base_name(r["text"])
    title = r["title"]
    if not title:
        return
    if angled := re.fullmatch(r"(.+?)\s*<([^<>]+)>", title):
        others = [angled.group(2).strip(), *r["alternative_titles"]]
        r.update(title=angled.group(1).strip(), alternative_titles=others)
        note(r, "title_marks")
        return
    if (prefix := _LETTER_PREFIX.match(base)) and not title.startswith("("):
        r["title"] = f"({prefix.group(1)}){title}"
        note(r, "title_marks")
    elif (version := _VERSION_AFTER.match(base)) and version["title"].replace(".", " ").strip() == title:
        r["title"] = f"{title} {version.group('version')}"
        note(r, "title_marks")

