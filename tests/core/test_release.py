"""The release-name parser: a table of real-world-style names across guessit's weak spots, and hypothesis."""

from __future__ import annotations

import string
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jellybit.core.release import MAX_PARSE_CHARS, Release, parse_many, parse_release
from jellybit.core.release_fixes import CORRECTIONS

M, E, P = "movie", "episode", "season_pack"

# (name, media_type, title, year, other expected fields)
CASES: list[tuple[str, str | None, str | None, int | None, dict[str, Any]]] = [
    # ---- movies
    ("The.Matrix.1999.1080p.BluRay.x264-GRP", M, "The Matrix", 1999, {}),
    ("Inception (2010) 2160p UHD BluRay REMUX HDR HEVC", M, "Inception", 2010, {}),
    ("Parasite.2019.KOREAN.1080p.WEBRip.x265-RARBG", M, "Parasite", 2019, {}),
    ("Amelie.2001.FRENCH.720p.BluRay.x264", M, "Amelie", 2001, {}),
    ("The Godfather Part II (1974) 1080p", M, "The Godfather Part II", 1974, {}),
    ("Mad.Max.Fury.Road.2015.1080p.BluRay.DTS.x264", M, "Mad Max Fury Road", 2015, {}),
    ("Spider-Man.No.Way.Home.2021.2160p.WEB-DL.DDP5.1.Atmos.HDR.HEVC", M, "Spider-Man No Way Home", 2021, {}),
    ("Everything.Everywhere.All.at.Once.2022.1080p.WEB-DL", M, "Everything Everywhere All at Once", 2022, {}),
    ("Oppenheimer.2023.IMAX.2160p.BluRay", M, "Oppenheimer", 2023, {}),
    ("Interstellar 2014 IMAX 1080p BluRay x264 DTS-HD MA 5.1", M, "Interstellar", 2014, {}),
    ("the.shawshank.redemption.1994.remastered.1080p.bluray", M, "the shawshank redemption", 1994, {}),
    ("Pulp Fiction [1994] 1080p", M, "Pulp Fiction", 1994, {}),
    ("Alien.1979.Directors.Cut.1080p.BluRay", M, "Alien", 1979, {}),
    ("Casablanca.1942.720p.BRRip", M, "Casablanca", 1942, {}),
    ("Heat.1995.UHD.BluRay.2160p.TrueHD.Atmos.7.1.HEVC.REMUX-FraMeSToR", M, "Heat", 1995, {}),
    ("Arrival.2016.1080p.WEB-DL.H264.AC3-EVO", M, "Arrival", 2016, {}),
    ("Joker (2019) [1080p] [YTS.MX]", M, "Joker", 2019, {}),
    ("Am\u00e9lie (2001) 1080p", M, "Am\u00e9lie", 2001, {}),
    ("Leon.The.Professional.1994.Extended.1080p", M, "Leon The Professional", 1994, {}),
    ("Spirited.Away.2001.JAPANESE.1080p.BluRay.x264", M, "Spirited Away", 2001, {}),
    ("Movie.Title.2020.1080p.mkv", M, "Movie Title", 2020, {}),
    ("Top.Gun.Maverick.2022.1080p", M, "Top Gun Maverick", 2022, {}),
    ("Barbie.2023.HDR.2160p.WEB.h265-ETHEL", M, "Barbie", 2023, {}),
    ("No.Country.for.Old.Men.2007.1080p", M, "No Country for Old Men", 2007, {}),
    (
        "The.Lord.of.the.Rings.The.Fellowship.of.the.Ring.2001.EXTENDED.1080p",
        M,
        "The Lord of the Rings The Fellowship of the Ring",
        2001,
        {},
    ),
    ("Get.Out.2017.1080p.BluRay", M, "Get Out", 2017, {}),
    ("Up.2009.1080p.BluRay", M, "Up", 2009, {}),
    ("Her.2013.720p", M, "Her", 2013, {}),
    ("It.2017.1080p.BluRay", M, "It", 2017, {}),
    ("Drive.2011.1080p.BluRay.x264-SPARKS", M, "Drive", 2011, {"release_group": "SPARKS"}),
    # ---- a year (or a number) inside the title
    ("2001.A.Space.Odyssey.1968.1080p.BluRay.x264", M, "2001 A Space Odyssey", 1968, {}),
    ("2001 A Space Odyssey (1968)", M, "2001 A Space Odyssey", 1968, {}),
    ("Blade.Runner.2049.2017.1080p.BluRay", M, "Blade Runner 2049", 2017, {}),
    ("Blade Runner 2049 (2017) 2160p", M, "Blade Runner 2049", 2017, {}),
    ("Blade.Runner.2049.1080p.BluRay", M, "Blade Runner 2049", None, {}),
    ("1917.2019.1080p.BluRay", M, "1917", 2019, {}),
    ("1917.1080p.BluRay.x264", M, "1917", None, {}),
    ("2012.2009.1080p.BluRay", M, "2012", 2009, {}),
    ("Wonder.Woman.1984.2020.1080p.WEB-DL", M, "Wonder Woman 1984", 2020, {}),
    ("1984.1984.720p.BluRay", M, "1984", 1984, {}),
    ("Apollo.13.1995.1080p", M, "Apollo 13", 1995, {}),
    ("Ocean's.Eleven.2001.1080p", M, "Ocean's Eleven", 2001, {}),
    ("300.2006.1080p.BluRay", M, "300", 2006, {}),
    ("Fantastic.Four.2015.1080p", M, "Fantastic Four", 2015, {}),
    # ---- single episodes
    ("Breaking.Bad.S01E01.720p.BluRay.x264", E, "Breaking Bad", None, {"season": 1, "episodes": [1]}),
    (
        "Game.of.Thrones.S08E06.1080p.WEB.H264-MEMENTO",
        E,
        "Game of Thrones",
        None,
        {"season": 8, "episodes": [6], "release_group": "MEMENTO"},
    ),
    ("The.Office.US.S02E03.720p", E, "The Office", None, {"season": 2, "episodes": [3]}),
    ("Doctor.Who.2005.S01E01.Rose.1080p", E, "Doctor Who", 2005, {"season": 1, "episodes": [1]}),
    ("Shogun.2024.S01E01.1080p.WEB.h264", E, "Shogun", 2024, {"season": 1, "episodes": [1]}),
    ("Fallout.1x01.The.End.1080p.mkv", E, "Fallout", None, {"season": 1, "episodes": [1]}),
    ("Show - S01E01 - Pilot.mkv", E, "Show", None, {"season": 1, "episodes": [1]}),
    ("Show Name S03E10 1080p WEB-DL", E, "Show Name", None, {"season": 3, "episodes": [10]}),
    ("show.name.s03e10.720p.hdtv", E, "show name", None, {"season": 3, "episodes": [10]}),
    ("The.Last.of.Us.S01E09.2160p.HMAX.WEB-DL", E, "The Last of Us", None, {"season": 1, "episodes": [9]}),
    (
        "Severance.S02E01.Hello.Ms.Cobel.1080p.ATVP.WEB-DL",
        E,
        "Severance",
        None,
        {"season": 2, "episodes": [1]},
    ),
    ("Show.Name.S10E100.720p", E, "Show Name", None, {"season": 10, "episodes": [100]}),
    ("The.Simpsons.S35E01.1080p", E, "The Simpsons", None, {"season": 35, "episodes": [1]}),
    ("Show.S01E00.Pilot.mkv", E, "Show", None, {"season": 1, "episodes": [0]}),
    ("Show.Season.1.Episode.5.mkv", E, "Show", None, {"season": 1, "episodes": [5]}),
    ("Show.Name.S02.E05.1080p", E, "Show Name", None, {"season": 2, "episodes": [5]}),
    ("Show_Name_S02E05_720p", E, "Show Name", None, {"season": 2, "episodes": [5]}),
    ("Show.E05.1080p.mkv", E, "Show", None, {"season": 1, "episodes": [5], "absolute_episodes": []}),
    ("Show.Ep.05.1080p", E, "Show", None, {"episodes": [5]}),
    ("S01E05.mkv", E, None, None, {"season": 1, "episodes": [5]}),
    ("Top.Gear.S2024E05.1080p", E, "Top Gear", None, {"season": 2024, "episodes": [5]}),
    ("Doctor.Who.2023.S2024E01.1080p", E, "Doctor Who", 2023, {"season": 2024, "episodes": [1]}),
    (
        "House.of.the.Dragon.S02E08.1080p.WEB.H264-SuccessfulCrab",
        E,
        "House of the Dragon",
        None,
        {"season": 2, "episodes": [8]},
    ),
    (
        "Star.Trek.Strange.New.Worlds.S02E04.720p",
        E,
        "Star Trek Strange New Worlds",
        None,
        {"season": 2, "episodes": [4]},
    ),
    ("Mr.Robot.S04E13.eps4.12.whoami.1080p", E, "Mr Robot", None, {"season": 4}),
    ("Show.Name.(2019).S01E02.1080p", E, "Show Name", 2019, {"season": 1, "episodes": [2]}),
    ("24.S01E01.720p.BluRay", E, "24", None, {"season": 1, "episodes": [1]}),
    # ---- multi-episode files
    ("Show.S01E01-E03.1080p.WEB-DL.mkv", E, "Show", None, {"season": 1, "episodes": [1, 2, 3]}),
    ("Show.S01E01-03.1080p.WEB-DL.mkv", E, "Show", None, {"season": 1, "episodes": [1, 2, 3]}),
    ("Show.1x01-03.HDTV.mkv", E, "Show", None, {"season": 1, "episodes": [1, 2, 3]}),
    # guessit reads x262..x265 after a season number as an encoder and loses the episode
    ("Show.1x264.mkv", E, "Show", None, {"season": 1, "episodes": [264]}),
    ("Long.Show.12x262.720p.x264.mkv", E, "Long Show", None, {"season": 12, "episodes": [262]}),
    ("Show.S01E01E02.720p.mkv", E, "Show", None, {"season": 1, "episodes": [1, 2]}),
    ("Show.E01E02.720p.mkv", E, "Show", None, {"season": 1, "episodes": [1, 2]}),
    ("Show.S01E01+E02.mkv", E, "Show", None, {"season": 1, "episodes": [1, 2]}),
    ("Show.S01E01-E02-E03.mkv", E, "Show", None, {"season": 1, "episodes": [1, 2, 3]}),
    ("Show.S02E09E10.1080p", E, "Show", None, {"season": 2, "episodes": [9, 10]}),
    ("Show.S02E09-E10.1080p", E, "Show", None, {"season": 2, "episodes": [9, 10]}),
    ("Show - 2x09-10 - Finale.mkv", E, "Show", None, {"season": 2, "episodes": [9, 10]}),
    (
        "Doctor.Who.S04E17-E18.The.End.of.Time.1080p",
        E,
        "Doctor Who",
        None,
        {"season": 4, "episodes": [17, 18]},
    ),
    ("Show.S03E01.E02.720p", E, "Show", None, {"season": 3, "episodes": [1, 2]}),
    # ---- season packs
    ("Show.S01.1080p.WEB-DL", P, "Show", None, {"season": 1, "episodes": []}),
    ("Show Season 1 1080p", P, "Show", None, {"season": 1}),
    ("Show.S01-S03.1080p.BluRay", P, "Show", None, {"season": 1, "seasons": [1, 2, 3]}),
    ("Show.S01-03.1080p", P, "Show", None, {"seasons": [1, 2, 3]}),
    ("Show.Seasons.1-3.1080p", P, "Show", None, {"seasons": [1, 2, 3]}),
    ("Show (2010) Season 1-3 1080p", P, "Show", 2010, {"seasons": [1, 2, 3]}),
    ("Show.Complete.Series.1080p", P, "Show", None, {"complete": True, "season": None}),
    ("Show.S01.COMPLETE.1080p", P, "Show", None, {"season": 1, "complete": True}),
    (
        "The.Office.US.Complete.Series.S01-S09.720p",
        P,
        "The Office",
        None,
        {"seasons": list(range(1, 10)), "complete": True},
    ),
    ("The.Expanse.S01-S06.COMPLETE.1080p.BluRay", P, "The Expanse", None, {"seasons": [1, 2, 3, 4, 5, 6]}),
    ("Game.of.Thrones.S08.2160p.UHD.BluRay", P, "Game of Thrones", None, {"season": 8}),
    ("Show.Name.Season.2.Complete.720p", P, "Show Name", None, {"season": 2}),
    ("Breaking Bad - Season 5 [1080p]", P, "Breaking Bad", None, {"season": 5}),
    ("Fargo.S05.1080p.AMZN.WEB-DL.DDP5.1.H.264-NTb", P, "Fargo", None, {"season": 5, "release_group": "NTb"}),
    ("True.Detective.S01.2160p.UHD.BluRay.x265", P, "True Detective", None, {"season": 1}),
    ("Show.2019.S02.1080p", P, "Show", 2019, {"season": 2}),
    ("Sherlock.S01-S04.1080p.BluRay", P, "Sherlock", None, {"seasons": [1, 2, 3, 4]}),
    ("Band.of.Brothers.S01.1080p.BluRay", P, "Band of Brothers", None, {"season": 1}),
    ("Friends.The.Complete.Series.1080p.BluRay", P, "Friends", None, {"complete": True}),
    ("Show.S01.Part.1.1080p", P, "Show", None, {"season": 1}),
    # ---- daily shows
    (
        "The.Daily.Show.2024.03.15.Guest.720p.WEB.h264-GRP",
        E,
        "The Daily Show",
        None,
        {"air_date": "2024-03-15"},
    ),
    ("Show.2024.03.15.mkv", E, "Show", None, {"air_date": "2024-03-15"}),
    ("Jimmy.Fallon.2024-03-15.mkv", E, "Jimmy Fallon", None, {"air_date": "2024-03-15"}),
    (
        "The.Late.Show.with.Stephen.Colbert.2023.11.02.Guest.1080p",
        E,
        "The Late Show with Stephen Colbert",
        None,
        {"air_date": "2023-11-02"},
    ),
    (
        "Last.Week.Tonight.with.John.Oliver.2024.05.12.720p",
        E,
        "Last Week Tonight with John Oliver",
        None,
        {"air_date": "2024-05-12"},
    ),
    ("WWE.Raw.2024.01.08.720p.HDTV", E, "WWE Raw", None, {"air_date": "2024-01-08"}),
    ("Conan.2019.06.24.Guest.720p", E, "Conan", None, {"air_date": "2019-06-24"}),
    ("Jeopardy.2024.02.29.720p", E, "Jeopardy", None, {"air_date": "2024-02-29"}),
    ("The.View.2022.12.01.mkv", E, "The View", None, {"air_date": "2022-12-01"}),
    ("Show 2021-07-04 1080p", E, "Show", None, {"air_date": "2021-07-04"}),
    # ---- anime and fansub numbering (absolute)
    (
        "[SubsPlease] One Piece - 1071 (1080p) [ABCD1234].mkv",
        E,
        "One Piece",
        None,
        {"absolute_episodes": [1071], "episodes": [], "season": None, "release_group": "SubsPlease"},
    ),
    (
        "[Erai-raws] Boruto - Naruto Next Generations - 293 [1080p].mkv",
        E,
        "Boruto",
        None,
        {"absolute_episodes": [293], "release_group": "Erai-raws"},
    ),
    ("[HorribleSubs] Show - 12 [720p].mkv", E, "Show", None, {"absolute_episodes": [12]}),
    ("[Group] Show - 01v2 [720p].mkv", E, "Show", None, {"absolute_episodes": [1]}),
    ("[SubsPlease] One Piece - 1 (1080p) [ABCD1234].mkv", E, "One Piece", None, {"absolute_episodes": [1]}),
    (
        "[SubsPlease] Frieren - 28 (1080p) [F00DCAFE].mkv",
        E,
        "Frieren",
        None,
        {"absolute_episodes": [28], "release_group": "SubsPlease"},
    ),
    (
        "[Judas] Naruto Shippuden - 480 [1080p][HEVC x265 10bit].mkv",
        E,
        "Naruto Shippuden",
        None,
        {"absolute_episodes": [480]},
    ),
    ("[Group] Detective Conan - 1100 [720p].mkv", E, "Detective Conan", None, {"absolute_episodes": [1100]}),
    ("One Piece 1071", E, "One Piece", None, {"absolute_episodes": [1071]}),
    (
        "[Group] Show - 100-105 [1080p]",
        E,
        "Show",
        None,
        {"absolute_episodes": [100, 101, 102, 103, 104, 105]},
    ),
    (
        "Naruto Shippuden - 001-500 [Batch]",
        P,
        "Naruto Shippuden",
        None,
        {"absolute_episodes": list(range(1, 501)), "season": None},
    ),
    (
        "[Group] Show (01-12) [1080p] [Batch]",
        P,
        "Show",
        None,
        {"absolute_episodes": list(range(1, 13)), "release_group": "Group"},
    ),
    ("[Group] Show [01-12]", E, "Show", None, {"absolute_episodes": list(range(1, 13))}),
    (
        "[EMBER] Bocchi the Rock! - 05 [1080p] [Multi Subs].mkv",
        E,
        "Bocchi the Rock!",
        None,
        {"absolute_episodes": [5]},
    ),
    (
        "[Anime Time] Dragon Ball Super - 131 [1080p][HEVC 10bit x265][AAC][Multi Sub].mkv",
        E,
        "Dragon Ball Super",
        None,
        {"absolute_episodes": [131], "release_group": "Anime Time"},
    ),
    (
        "[Group] Mushoku Tensei - Isekai Ittara Honki Dasu - 01",
        E,
        "Mushoku Tensei",
        None,
        {"absolute_episodes": [1], "alternative_titles": ["Isekai Ittara Honki Dasu"]},
    ),
    (
        "[ASW] Kusuriya no Hitorigoto - 24 [1080p HEVC][5C1D7C25].mkv",
        E,
        "Kusuriya no Hitorigoto",
        None,
        {"absolute_episodes": [24], "release_group": "ASW"},
    ),
    ("[Tsundere-Raws] Show - 07 (CR 1080p).mkv", E, "Show", None, {"absolute_episodes": [7]}),
    ("[Group] Show - 1000 [1080p]", E, "Show", None, {"absolute_episodes": [1000]}),
    ("[Group] Show - 2005 (1080p) [ABCDEF12].mkv", E, "Show", None, {"absolute_episodes": [2005]}),
    ("[Group] Show (2019) - 05 [1080p].mkv", E, "Show", 2019, {"absolute_episodes": [5]}),
    ("Show - 05 [1080p].mkv", E, "Show", None, {"absolute_episodes": [5]}),
    ("[Group]_Show_-_03_[720p].mkv", E, "Show", None, {"absolute_episodes": [3]}),
    # ---- fansub names that do carry a season
    (
        "[SubsPlease] Jujutsu Kaisen S2 - 05 (1080p) [ABC12345].mkv",
        E,
        "Jujutsu Kaisen",
        None,
        {"season": 2, "episodes": [5], "absolute_episodes": [], "release_group": "SubsPlease"},
    ),
    (
        "[SubsPlease] Spy x Family Season 2 - 05 (1080p).mkv",
        E,
        "Spy x Family",
        None,
        {"season": 2, "episodes": [5]},
    ),
    ("[Group] Show 2nd Season - 03 [720p].mkv", E, "Show", None, {"season": 2, "episodes": [3]}),
    ("[Group] Show 3rd Season - 12 [1080p].mkv", E, "Show", None, {"season": 3, "episodes": [12]}),
    (
        "[Erai-raws] Shingeki no Kyojin Season 3 - 01 [1080p].mkv",
        E,
        "Shingeki no Kyojin",
        None,
        {"season": 3, "episodes": [1]},
    ),
    (
        "[Group] Show S01E05 [1080p].mkv",
        E,
        "Show",
        None,
        {"season": 1, "episodes": [5], "absolute_episodes": []},
    ),
    ("[DB] Show S03 [1080p][Dual Audio]", P, "Show", None, {"season": 3}),
    ("[Group] Show - S2 - 10 [1080p].mkv", E, "Show", None, {"season": 2, "episodes": [10]}),
    # ---- CJK releases
    ("[字幕组] 进击的巨人 第01集 [1080p].mp4", E, "进击的巨人", None, {"absolute_episodes": [1]}),
    (
        "[字幕组][进击的巨人][01][1080p][简体].mp4",
        E,
        "进击的巨人",
        None,
        {"absolute_episodes": [1], "release_group": "字幕组"},
    ),
    ("[字幕组] 进击的巨人 第二季 第01集 [1080p].mp4", E, "进击的巨人", None, {"season": 2, "episodes": [1]}),
    (
        "[LoliHouse] 葬送的芙莉莲 / Sousou no Frieren - 05 [WebRip 1080p HEVC-10bit AAC][简繁内封字幕].mkv",
        E,
        "Sousou no Frieren",
        None,
        {"absolute_episodes": [5], "alternative_titles": ["葬送的芙莉莲"], "release_group": "LoliHouse"},
    ),
    (
        "[桜都字幕组] 进击的巨人 第01集 [1080p][简繁内封字幕].mp4",
        E,
        "进击的巨人",
        None,
        {"release_group": "桜都字幕组", "absolute_episodes": [1]},
    ),
    ("进击的巨人 第01話", E, "进击的巨人", None, {"absolute_episodes": [1]}),
    (
        "[喵萌奶茶屋][间谍过家家][12][1080p][简日双语]",
        E,
        "间谍过家家",
        None,
        {"absolute_episodes": [12], "release_group": "喵萌奶茶屋"},
    ),
    (
        "[北宇治字幕组] 孤独摇滚 / Bocchi the Rock! [05][WebRip][1080p][简日内嵌]",
        E,
        "Bocchi the Rock!",
        None,
        {"alternative_titles": ["孤独摇滚"], "release_group": "北宇治字幕组"},
    ),
    (
        "[Nekomoe kissaten][Kusuriya no Hitorigoto][24][1080p][JPSC].mp4",
        E,
        "Kusuriya no Hitorigoto",
        None,
        {"absolute_episodes": [24], "release_group": "Nekomoe kissaten"},
    ),
    (
        "[ANi] 葬送的芙莉莲 - 28 [1080P][Baha][WEB-DL][AAC AVC][CHT].mp4",
        E,
        "葬送的芙莉莲",
        None,
        {"absolute_episodes": [28], "release_group": "ANi"},
    ),
    (
        "[字幕组][鬼灭之刃][01-26][1080p][合集]",
        E,
        "鬼灭之刃",
        None,
        {"absolute_episodes": list(range(1, 27))},
    ),
    ("[VCB-Studio] Yuru Camp [Ma10p_1080p]", M, "Yuru Camp", None, {"release_group": "VCB-Studio"}),
    # ---- Cyrillic titles and transliterated aliases
    (
        "Фарго / Fargo (2014) S01 WEB-DL 1080p",
        P,
        "Fargo",
        2014,
        {"season": 1, "alternative_titles": ["Фарго"]},
    ),
    (
        "Фарго / Fargo [S01] (2014) WEB-DL 1080p",
        P,
        "Fargo",
        2014,
        {"season": 1, "alternative_titles": ["Фарго"]},
    ),
    ("Фарго (Fargo) 2014 1 сезон", P, "Fargo", 2014, {"season": 1, "alternative_titles": ["Фарго"]}),
    ("Шерлок (Sherlock) 1 сезон", P, "Sherlock", None, {"season": 1, "alternative_titles": ["Шерлок"]}),
    ("Фарго | Fargo (2014)", M, "Fargo", 2014, {"alternative_titles": ["Фарго"]}),
    ("Сериал Фарго 2 сезон 5 серия", E, "Фарго", None, {"season": 2, "episodes": [5]}),
    ("Фарго сезон 1 серия 3", E, "Фарго", None, {"season": 1, "episodes": [3]}),
    ("Фарго 1 сезон", P, "Фарго", None, {"season": 1}),
    ("Мастер и Маргарита (2024) WEB-DL 1080p", M, "Мастер и Маргарита", 2024, {}),
    (
        "Мастер и Маргарита / The Master and Margarita (2024) WEB-DL 1080p",
        M,
        "The Master and Margarita",
        2024,
        {"alternative_titles": ["Мастер и Маргарита"]},
    ),
    (
        "Игра престолов / Game of Thrones [01x01-10] (2011) BDRip",
        E,
        "Game of Thrones",
        2011,
        {"season": 1, "episodes": list(range(1, 11)), "alternative_titles": ["Игра престолов"]},
    ),
    (
        "Во все тяжкие / Breaking Bad [Сезон 1, Серии 1-7 из 7] (2008) BDRip",
        E,
        "Breaking Bad",
        2008,
        {"season": 1, "episodes": list(range(1, 8)), "alternative_titles": ["Во все тяжкие"]},
    ),
    ("Бригада (2002) DVDRip", M, "Бригада", 2002, {}),
    ("Брат 2 (2000) BDRip 1080p", M, "Брат 2", 2000, {}),
    ("Москва слезам не верит (1979) BDRip 720p", M, "Москва слезам не верит", 1979, {}),
    (
        "Ирония судьбы, или С лёгким паром! (1975) WEB-DL 1080p",
        M,
        "Ирония судьбы, или С лёгким паром!",
        1975,
        {},
    ),
    (
        "Слово пацана. Кровь на асфальте (2023) S01 WEB-DL 1080p",
        P,
        "Слово пацана Кровь на асфальте",
        2023,
        {"season": 1},
    ),
    ("Остров / Ostrov (2006) DVDRip", M, "Ostrov", 2006, {"alternative_titles": ["Остров"]}),
    (
        "Тьма / Dark (2017) S01-S03 WEB-DL 1080p",
        P,
        "Dark",
        2017,
        {"seasons": [1, 2, 3], "alternative_titles": ["Тьма"]},
    ),
    ("Чернобыль / Chernobyl (2019) S01 BDRip 1080p", P, "Chernobyl", 2019, {"season": 1}),
    (
        "Друзья / Friends (1994-2004) S01-S10 BDRip 1080p",
        P,
        "Friends",
        None,
        {"seasons": list(range(1, 11)), "alternative_titles": ["Друзья"]},
    ),
    (
        "Sherlock.S01E01.RUS.ENG.1080p",
        E,
        "Sherlock",
        None,
        {"season": 1, "episodes": [1], "languages": ["ru", "en"]},
    ),
    ("Шерлок.S01E01.1080p", E, "Шерлок", None, {"season": 1, "episodes": [1]}),
    ("Fargo.S01E03.1080p.Rus.Eng.mkv", E, "Fargo", None, {"season": 1, "episodes": [3]}),
    (
        "Интерстеллар / Interstellar (2014) BDRip 1080p | Лицензия",
        M,
        "Interstellar",
        2014,
        {"alternative_titles": ["Интерстеллар"]},
    ),
    # ---- mini-series: Part and Chapter numbering
    ("Planet.Earth.01of11.From.Pole.to.Pole.mkv", E, "Planet Earth", None, {"episodes": [1]}),
    ("Planet Earth Part 2 of 11 720p", E, "Planet Earth", None, {"episodes": [2]}),
    ("The.Mandalorian.Chapter.3.mkv", E, "The Mandalorian", None, {"episodes": [3]}),
    ("Show.Chapter.3.1080p.mkv", E, "Show", None, {"episodes": [3]}),
    ("Chernobyl.Part.1.1080p.mkv", M, "Chernobyl", None, {"part": 1}),
    ("Band.of.Brothers.Part.Two.mkv", M, "Band of Brothers", None, {"part": 2}),
    ("John.Wick.Chapter.4.2023.1080p", M, "John Wick Chapter 4", 2023, {}),
    ("The.Pacific.Part.3.720p.BluRay", M, "The Pacific", None, {"part": 3}),
    ("Stranger.Things.Chapter.Eight.mkv", E, "Stranger Things", None, {"episodes": [8]}),
    (
        "Cosmos.A.Spacetime.Odyssey.Part.05.of.13.1080p",
        E,
        "Cosmos A Spacetime Odyssey",
        None,
        {"episodes": [5]},
    ),
    # ---- movie parts that are part of the title, and file parts
    ("Dune.Part.Two.2024.2160p.WEB-DL", M, "Dune Part Two", 2024, {"part": None}),
    (
        "Harry.Potter.and.the.Deathly.Hallows.Part.1.2010.1080p",
        M,
        "Harry Potter and the Deathly Hallows Part 1",
        2010,
        {"part": None},
    ),
    ("Kill.Bill.Vol.1.2003.1080p", M, "Kill Bill Vol 1", 2003, {}),
    ("Kill Bill Vol. 2 (2004) 1080p", M, "Kill Bill Vol 2", 2004, {}),
    ("Movie.2010.1080p.BluRay-part1.mkv", M, "Movie", 2010, {"part": 1}),
    ("Movie.2010.CD2.avi", M, "Movie", 2010, {"part": 2}),
    ("Movie.2010.Disc.2.mkv", M, "Movie", 2010, {"part": 2, "alternative_titles": []}),
    ("Guardians.of.the.Galaxy.Vol.3.2023.1080p", M, "Guardians of the Galaxy Vol 3", 2023, {}),
    ("The.Hunger.Games.Mockingjay.Part.2.2015.1080p", M, "The Hunger Games Mockingjay Part 2", 2015, {}),
    # ---- a site's domain leading the name, then a dash (guessit knows `www.` names only)
    ("Crazy4TV.com - Dark Matter Season 1 S01 720p BluRay x265 HEVC", P, "Dark Matter", None, {"season": 1}),
    ("Torrent9.io - Dune.Part.Two.2024.FRENCH.1080p", M, "Dune Part Two", 2024, {}),
    ("[ Torrent9.io ] - The.Bear.S03E01.1080p.WEB", E, "The Bear", None, {"season": 3, "episodes": [1]}),
    ("www.UIndex.org    -    The Bear S03E01 1080p WEB h264-ETHEL", E, "The Bear", None, {"episodes": [1]}),
    ("Mr.Robot.S01E01.720p", E, "Mr Robot", None, {"season": 1, "episodes": [1]}),
    # ---- a language name that ends the title (a bracketed year, or nothing else before the year)
    ("The Good German (2006) 720p BluRay.mkv", M, "The Good German", 2006, {"languages": []}),
    ("Dutch.1991.1080p.BluRay.x264", M, "Dutch", 1991, {"languages": []}),
    ("The Good German (2006) FRENCH 720p", M, "The Good German", 2006, {"languages": ["fr"]}),
    ("Immersion.French.2011.STV.NTSC.DVDR", M, "Immersion", 2011, {"languages": ["fr"]}),
    ("The.Interpreter.2005.German.DL.1080p.BluRay", M, "The Interpreter", 2005, {}),
    ("The.German.Doctor.2013.LIMITED.720p.BluRay.x264", M, "The German Doctor", 2013, {}),
    # ---- specials
    ("Show.S00E01.Special.mkv", E, "Show", None, {"season": 0, "episodes": [1], "special": True}),
    (
        "Doctor.Who.S00E150.The.Day.of.the.Doctor.1080p",
        E,
        "Doctor Who",
        None,
        {"season": 0, "episodes": [150]},
    ),
    ("[Group] Show - SP1 [1080p].mkv", E, "Show", None, {"season": 0, "episodes": [1], "special": True}),
    ("[Group] Show - SP [1080p].mkv", E, "Show", None, {"season": 0, "special": True}),
    ("[Group] Show OVA [1080p].mkv", E, "Show", None, {"season": 0, "special": True}),
    ("[Group] Show - OVA 2 [1080p].mkv", E, "Show", None, {"season": 0, "episodes": [2]}),
    ("[Group] Show OAD 03 [720p].mkv", E, "Show", None, {"season": 0, "episodes": [3]}),
    ("[Group] Show - Specials [1080p]", P, "Show", None, {"season": 0, "special": True}),
    ("Show.S00.Specials.1080p", P, "Show", None, {"season": 0, "special": True}),
    ("Sherlock.S00E01.The.Abominable.Bride.1080p", E, "Sherlock", None, {"season": 0, "episodes": [1]}),
    ("Show.Special.2019.mkv", M, "Show Special", 2019, {}),
    # ---- file paths inside packs
    ("Show.S01.1080p/Show.S01E02.1080p.mkv", E, "Show", None, {"season": 1, "episodes": [2]}),
    (
        "Breaking Bad/Season 2/Breaking.Bad.S02E03.mkv",
        E,
        "Breaking Bad",
        None,
        {"season": 2, "episodes": [3]},
    ),
    ("Show (2010)/Season 01/05.mkv", E, "Show", 2010, {"season": 1, "episodes": [5]}),
    ("Movie (2010)/Movie (2010).mkv", M, "Movie", 2010, {}),
    ("[Group] Show [1080p]/[Group] Show - 07 [1080p].mkv", E, "Show", None, {"absolute_episodes": [7]}),
    ("Trilogy/Back.to.the.Future.Part.II.1989.1080p.mkv", M, "Back to the Future Part II", 1989, {}),
    ("Fargo (2014)/Fargo.S01E02.mkv", E, "Fargo", 2014, {"season": 1, "episodes": [2]}),
    ("Show (2010)/Season 01/Show - 05.mkv", E, "Show", 2010, {"season": 1, "episodes": [5]}),
    ("Show/Season 2/Episode 7.mkv", E, "Show", None, {"season": 2, "episodes": [7]}),
    ("Pack/Show.S03E07.720p.HDTV.x264.mkv", E, "Show", None, {"season": 3, "episodes": [7]}),
    # ---- issue 10: the contract's conventions
    ("Kemono Tales - 047 - The Long Road [Grp].avi", E, "Kemono Tales", None,
     {"season": None, "absolute_episodes": [47], "episodes": []}),
    ("[Grp] Kemono Tales - 12 (BD)", E, "Kemono Tales", None, {"absolute_episodes": [12]}),
    ("Kemono_Tales_e23_the_river.mkv", E, "Kemono Tales", None, {"season": None, "absolute_episodes": [23]}),
    ("House.of.Cards.US.S02.720p", P, "House of Cards", None, {"season": 2, "country": "US"}),
    ("Shameless.UK.S01E01.mkv", E, "Shameless", None, {"country": "GB", "episodes": [1]}),
    ("24.Season.03.HDTV", P, "24", None, {"season": 3, "episodes": []}),
    ("Show.S01-S09.720p", P, "Show", None, {"season": 1, "seasons": list(range(1, 10))}),
    ("Show.S01-05.720p", P, "Show", None, {"season": 1, "seasons": [1, 2, 3, 4, 5]}),
    ("Show.2016.E04.mkv", E, "Show", 2016, {"season": 1, "episodes": [4], "season_assumed": True}),
    ("Mad.Men.305.306.720p", E, "Mad Men", None, {"season": 3, "episodes": [5, 6]}),
    ("Show.S02.Extras.05.mkv", P, "Show", None, {"season": 2, "episodes": []}),
    ("Show.S08E03.178.720p", E, "Show", None, {"season": 8, "episodes": [3], "absolute_episodes": [178]}),
    ("Bleach.s16e03-04.313-314-GROUP", E, "Bleach", None,
     {"episodes": [3, 4], "absolute_episodes": [313, 314]}),
    ("Show Name - 102", E, "Show Name", None, {"absolute_episodes": [102], "season": None}),
    ("Show.Name.Part.3.HDTV.720p.x264-Group", E, "Show Name", None, {"season": 1, "episodes": [3]}),
    ("Pokemon Black & White E10 - E17 [CW] AVI", E, "Pokemon Black & White", None,
     {"episodes": list(range(10, 18))}),
    # Sonarr's anime naming puts the absolute number after the episode, between dashes: no range
    ("The Avengers (EMH) - S01 E15 - 459 (1080p - BluRay).mp4", E, "The Avengers", None,
     {"season": 1, "episodes": [15]}),
    ("Show - S01 E15 - 20 - Title.mkv", E, "Show", None, {"season": 1, "episodes": [15]}),
    ("Show S01 E15-20 1080p", E, "Show", None, {"season": 1, "episodes": list(range(15, 21))}),
    ("Castle1x01.HDTV.XviD.avi", E, "Castle", None, {"season": 1, "episodes": [1]}),
    ("Show.Name.-.Temporada.15.720p.HDTV.x264[Cap.1503]SPANISH", E, "Show Name", None,
     {"season": 15, "episodes": [3]}),
    ("Downloads/Mad Men - 3x05 - The Fog [SDTV]/305 - The Fog.avi", E, "Mad Men", None,
     {"season": 3, "episodes": [5]}),
    # ---- nothing to read
    ("", None, None, None, {}),
    ("   ", None, None, None, {}),
    ("[ABCD1234]", None, None, None, {}),
    # ---- split titles: `A | B`, `A / B / Сезон 2 / Серии …`, `A / S2E1-10 of 10 [year, source]`
    ("Title A | Title B", M, "Title A", None, {"alternative_titles": ["Title B"]}),
    ("The Boys | Пацаны | S02 1080p", P, "The Boys", None, {"season": 2, "alternative_titles": ["Пацаны"]}),
    (
        "Пацаны | The Boys / Сезон 2 / Серии 1-8 из 8 [2020, WEB-DL 1080p]",
        E,
        "The Boys",
        2020,
        {"season": 2, "episodes": list(range(1, 9)), "alternative_titles": ["Пацаны"]},
    ),
    (
        "Черное зеркало / Black Mirror / Сезон 4 / Серии 1-6 (6) [2017, США, WEBRip 1080p] MVO",
        E,
        "Black Mirror",
        2017,
        {"season": 4, "episodes": list(range(1, 7)), "alternative_titles": ["Черное зеркало"]},
    ),
    (
        "Mare of Easttown / S1E1-7 of 7 [2021, WEB-DL]",
        E,
        "Mare of Easttown",
        2021,
        {"season": 1, "episodes": list(range(1, 8)), "alternative_titles": []},
    ),
    (
        "Ведьмак / The Witcher / S2E1-10 of 10 [2021, WEB-DL]",
        E,
        "The Witcher",
        2021,
        {"season": 2, "episodes": list(range(1, 11)), "alternative_titles": ["Ведьмак"]},
    ),
    # ---- a file below such a folder is its own episode, not the folder's range
    (
        "Ведьмак / The Witcher / S2E1-10 of 10 [2021, WEB-DL]/The.Witcher.S02E03.1080p.mkv",
        E,
        "The Witcher",
        2021,
        {"season": 2, "episodes": [3]},
    ),
    (
        "Метод / Method / Сезон 1 / Серии 1-16 из 16 [2015, WEB-DL]/05. Серия.mkv",
        E,
        "Method",
        2015,
        {"season": 1, "episodes": [5]},
    ),
    ("Show.S01E01-E03.720p/Show.S01E02.720p.mkv", E, "Show", None, {"season": 1, "episodes": [2]}),
    # ---- Korean titles: every word kept; broadcast rips number `E01.YYMMDD`
    (
        "오징어 게임 Squid Game S01E01 1080p",
        E,
        "Squid Game",
        None,
        {"season": 1, "episodes": [1], "alternative_titles": ["오징어 게임"]},
    ),
    ("오징어 게임 S01E01 1080p WEB-DL", E, "오징어 게임", None, {"season": 1, "episodes": [1]}),
    (
        "이상한 변호사 우영우.E01.220629.1080p-NEXT",
        E,
        "이상한 변호사 우영우",
        None,
        {"season": 1, "episodes": [1], "air_date": "2022-06-29", "season_assumed": True},
    ),
    (
        "슬기로운 의사생활 시즌2.E01.210617.720p-NEXT",
        E,
        "슬기로운 의사생활",
        None,
        {"season": 2, "episodes": [1], "air_date": "2021-06-17", "season_assumed": False},
    ),
    ("응답하라 1988.E01.151106.HDTV.H264.720p-WITH", E, "응답하라 1988", None,
     {"season": 1, "episodes": [1]}),
    (
        "사랑의 불시착.Crash.Landing.on.You.E16.200216.1080p",
        E,
        "Crash Landing on You",
        None,
        {"episodes": [16], "air_date": "2020-02-16", "alternative_titles": ["사랑의 불시착"]},
    ),
    ("기생충 Parasite 2019 1080p BluRay", M, "Parasite", 2019, {"alternative_titles": ["기생충"]}),
    # ---- round two: two-number names, title numbers, bracket fields, word markers
    ("office_03_19.avi", E, "office", None, {"season": 3, "episodes": [19]}),
    ("[5.01] Weight Loss.avi", E, "Weight Loss", None, {"season": 5, "episodes": [1]}),
    ("My Little Pony FiM - 6.01 - No Second Prances.mkv", E, "My Little Pony FiM", None,
     {"season": 6, "episodes": [1]}),
    ("Evangelion 5.1 Audio 1080p", M, "Evangelion", None, {"season": None}),
    ("[Erai-raws] 22-7 - 11 .mkv", E, "22-7", None, {"absolute_episodes": [11]}),
    ("Cyborg 009 (1968) [TSHS] episode 06 [30C15D62].mp4", E, "Cyborg 009", 1968, {"absolute_episodes": [6]}),
    ("[GM-Team][国漫][诛仙][Jade Dynasty][2022][11][HEVC][GB][4K]", E, "Jade Dynasty", 2022,
     {"absolute_episodes": [11], "alternative_titles": ["诛仙"]}),
    ("Mob.Psycho.100.II.E10.720p.WEB.x264-URANiME.mkv", E, "Mob Psycho 100 II", None,
     {"season": 1, "episodes": [10]}),
    ("Show.Name.S01E08.Episode.Title.720p.HDTV.x265.nzb.-.00.of.10", E, "Show Name", None,
     {"season": 1, "episodes": [8]}),
    ("Prehistoric park.3iz6.Supercroc.DVDRip.Xvid.avi", E, "Prehistoric park", None,
     {"season": 1, "episodes": [3]}),
    ("Otchayannie.domochozyaiki.(8.sez.21.ser.iz.23).2012.XviD.HDTVRip.avi", E, "Otchayannie domochozyaiki",
     2012, {"season": 8, "episodes": [21]}),
    ("Sons of Anarchy Sn4 Ep14 HD-TV", E, "Sons of Anarchy", None, {"season": 4, "episodes": [14]}),
    ("Adventure Time 10 th season", P, "Adventure Time", None, {"season": 10, "episodes": []}),
    ("The Amazing World of Gumball - 103, 104 - The Third - The Debt.mkv", E, "The Amazing World of Gumball",
     None, {"absolute_episodes": [103, 104], "season": None}),
    ("003. Show Name - Ep Name.avi", E, "Show Name", None, {"absolute_episodes": [3], "season": None}),
    ("Evangelion_1.11_You_Are_(Not)_Alone_(2009)_[1080p,BluRay,x264]_-_THORA.mkv", M,
     "Evangelion 1.11 You Are (Not) Alone", 2009, {"episodes": [], "absolute_episodes": []}),
    ("Show.1.0.Name.S01.E03.My.Ep.Name-Group", E, "Show 1.0 Name", None, {"season": 1, "episodes": [3]}),
    ("Ozk.02.10.F.avi", E, "Ozk", None, {"season": 2, "episodes": [10]}),
    ("EastEnders_20200116_19302000.mp4", E, "EastEnders", None, {"air_date": "2020-01-16"}),
    ("SIX.S01E05.400p.hdtv.x264-][ Collateral ][ 16-Feb-17 mp4", E, "SIX", None,
     {"season": 1, "episodes": [5], "air_date": "2017-02-16"}),
    ("Show.31-Feb-17.mkv", E, "Show", None, {"air_date": None}),
    ("Eve no Jikan 2 [88F4F7F0].mkv", E, "Eve no Jikan", None, {"absolute_episodes": [2]}),
    ("[Coalgirls]_White_Album_1-13_(1280x720_Blu-Ray_FLAC)", E, "White Album", None,
     {"absolute_episodes": list(range(1, 14))}),
    ("[GS] Classroom Crisis Vol.1&2 (BD 1080p 10bit FLAC)", M, "Classroom Crisis", None, {}),
    ("Hayate no Gotoku 2nd Season 24 (Blu-Ray 1080p) [Chihiro]", E, "Hayate no Gotoku", None,
     {"season": 2, "episodes": [24]}),
    ("....", None, None, None, {}),
]


def test_the_table_is_big_enough() -> None:
    assert len(CASES) >= 200


@pytest.mark.parametrize(
    ("name", "media_type", "title", "year", "extra"), CASES, ids=[c[0][:60] for c in CASES]
)
def test_release_names(
    name: str, media_type: str | None, title: str | None, year: int | None, extra: dict[str, Any]
) -> None:
    got = parse_release(name).to_dict()
    expected = {"media_type": media_type, "title": title, "year": year, **extra}
    assert {key: got[key] for key in expected} == expected


def test_corrections_are_named() -> None:
    assert "year_in_title" in parse_release("Blade.Runner.2049.1080p.BluRay").corrections
    assert "seasonless_episode" in parse_release("[SubsPlease] One Piece - 1071 (1080p)").corrections
    assert parse_release("Breaking.Bad.S01E01.720p").corrections == ()


def test_every_correction_is_named_documented_and_explained() -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "recognition.md").read_text(encoding="utf-8")
    names = [c.name for c in CORRECTIONS]
    assert len(set(names)) == len(names)
    for correction in CORRECTIONS:
        assert correction.summary, correction.name
        assert f"| `{correction.name}` |" in docs, correction.name


def test_titles_lists_the_title_then_aliases_once() -> None:
    release = parse_release("Фарго / Fargo (2014) S01 WEB-DL 1080p")
    assert release.titles() == ("Fargo", "Фарго")


def test_to_dict_is_json_ready_with_lists() -> None:
    data = parse_release("Show.S01E01-E03.mkv").to_dict()
    assert data["episodes"] == [1, 2, 3]
    assert isinstance(data["seasons"], list)


def test_hostile_names_do_not_break_the_parser() -> None:
    for name in (
        "../../etc/passwd",
        "a\x00b.S01E01.mkv",
        "x" * 4096,
        "S01E01" * 700,
        "\u202eevil.mkv",
        "Show.S99999E99999.mkv",
        "[" * 500,
        "Фарго / " * 300,
    ):
        release = parse_release(name)
        assert release.name == name
        assert release.title is None or len(release.title) <= MAX_PARSE_CHARS


def test_control_characters_are_never_in_a_title() -> None:
    release = parse_release("Show\x00Name\x1b.S01E02.mkv")
    assert release.title is not None
    assert not any(ch in release.title for ch in "\x00\x1b")
    assert (release.season, release.episodes) == (1, (2,))


_alphabet = st.characters(codec="utf-8", exclude_categories=("Cs",)) | st.sampled_from(
    list(string.ascii_letters + string.digits + " .-_[]()/|") + list("ФаргоСезонсерия进击的巨人第集話")
)


@settings(max_examples=120, deadline=None)
@given(st.text(alphabet=_alphabet, max_size=80))
def test_never_raises_and_is_deterministic(name: str) -> None:
    first = parse_release.__wrapped__(name)
    second = parse_release.__wrapped__(name)
    assert first == second
    assert isinstance(first, Release)
    assert first.media_type in (None, "movie", "episode", "season_pack")
    assert all(isinstance(e, int) for e in (*first.episodes, *first.absolute_episodes, *first.seasons))


@settings(max_examples=12, deadline=None)
@given(
    st.sampled_from(
        [
            "Show.S01E{n:02d}.1080p.WEB-DL.x264-GRP.mkv",
            "[Grp] Show - {n} [1080p].mkv",
            "Show - {n}.mkv",
            "Show.2024.03.{n:02d}.mkv",
            "Show.S{n:02d}.1080p",
            "Show.Part.{n}.mkv",
            "Movie.{n}.2010.mkv",
            "{n}.mkv",
            "Show.1x{n:02d}.mkv",
            "Show.S01E{n:02d}-E{n:02d}.mkv",
            "[Grp] Show - {n:03d} [1080p][ABCD{n:04d}].mkv",
            "Show/Season {n:02d}/Show.S{n:02d}E05.mkv",
            "Show.S01E01-E{n:02d}.mkv",
        ]
    ),
    st.lists(st.integers(1, 2100), min_size=8, max_size=12, unique=True),
)
def test_parse_many_matches_parsing_one_by_one(template: str, numbers: list[int]) -> None:
    names = [template.format(n=n) for n in sorted(numbers)]
    assert parse_many(names) == [parse_release(name) for name in names]


def test_parse_many_on_a_big_pack() -> None:
    names = [f"One.Piece/One.Piece.S01E{n:02d}.1080p.WEB-DL.mkv" for n in range(1, 1200)]
    names += [f"[SubsPlease] One Piece - {n} (1080p) [ABCD1234].mkv" for n in range(1, 800)]
    releases = parse_many(names)
    assert [r.episodes for r in releases[:1199]] == [(n,) for n in range(1, 1200)]
    assert [r.absolute_episodes for r in releases[1199:]] == [(n,) for n in range(1, 800)]
    for index in (0, 7, 98, 99, 100, 1198, 1199, 1207, 1298, 1299, 1997):
        assert releases[index] == parse_release.__wrapped__(names[index])
