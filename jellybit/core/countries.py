"""Country codes in one place: anything a name, a provider or a context says -> ISO 3166-1 alpha-2."""

from __future__ import annotations

import functools
import re

# ISO 3166-1: every alpha-3 code followed by its alpha-2 code (TVDB speaks alpha-3, lowercase).
_ISO = """
ABWAW AFGAF AGOAO AIAAI ALAAX ALBAL ANDAD AREAE ARGAR ARMAM ASMAS ATAAQ ATFTF ATGAG AUSAU AUTAT
AZEAZ BDIBI BELBE BENBJ BESBQ BFABF BGDBD BGRBG BHRBH BHSBS BIHBA BLMBL BLRBY BLZBZ BMUBM BOLBO
BRABR BRBBB BRNBN BTNBT BVTBV BWABW CAFCF CANCA CCKCC CHECH CHLCL CHNCN CIVCI CMRCM CODCD COGCG
COKCK COLCO COMKM CPVCV CRICR CUBCU CUWCW CXRCX CYMKY CYPCY CZECZ DEUDE DJIDJ DMADM DNKDK DOMDO
DZADZ ECUEC EGYEG ERIER ESHEH ESPES ESTEE ETHET FINFI FJIFJ FLKFK FRAFR FROFO FSMFM GABGA GBRGB
GEOGE GGYGG GHAGH GIBGI GINGN GLPGP GMBGM GNBGW GNQGQ GRCGR GRDGD GRLGL GTMGT GUFGF GUMGU GUYGY
HKGHK HMDHM HNDHN HRVHR HTIHT HUNHU IDNID IMNIM INDIN IOTIO IRLIE IRNIR IRQIQ ISLIS ISRIL ITAIT
JAMJM JEYJE JORJO JPNJP KAZKZ KENKE KGZKG KHMKH KIRKI KNAKN KORKR KWTKW LAOLA LBNLB LBRLR LBYLY
LCALC LIELI LKALK LSOLS LTULT LUXLU LVALV MACMO MAFMF MARMA MCOMC MDAMD MDGMG MDVMV MEXMX MHLMH
MKDMK MLIML MLTMT MMRMM MNEME MNGMN MNPMP MOZMZ MRTMR MSRMS MTQMQ MUSMU MWIMW MYSMY MYTYT NAMNA
NCLNC NERNE NFKNF NGANG NICNI NIUNU NLDNL NORNO NPLNP NRUNR NZLNZ OMNOM PAKPK PANPA PCNPN PERPE
PHLPH PLWPW PNGPG POLPL PRIPR PRKKP PRTPT PRYPY PSEPS PYFPF QATQA REURE ROURO RUSRU RWARW SAUSA
SDNSD SENSN SGPSG SGSGS SHNSH SJMSJ SLBSB SLESL SLVSV SMRSM SOMSO SPMPM SRBRS SSDSS STPST SURSR
SVKSK SVNSI SWESE SWZSZ SXMSX SYCSC SYRSY TCATC TCDTD TGOTG THATH TJKTJ TKLTK TKMTM TLSTL TONTO
TTOTT TUNTN TURTR TUVTV TWNTW TZATZ UGAUG UKRUA UMIUM URYUY USAUS UZBUZ VATVA VCTVC VENVE VGBVG
VIRVI VNMVN VUTVU WLFWF WSMWS YEMYE ZAFZA ZMBZM ZWEZW
"""
ALPHA3 = {pair[:3]: pair[3:] for pair in _ISO.split()}
ALPHA2 = frozenset(ALPHA3.values())
# Codes in common use that ISO reserves for another one (UK is "exceptionally reserved" for GB).
ALIASES = {"UK": "GB", "EL": "GR", "UAE": "AE"}
# Names a provider or a release may spell out (the context reader has its own adjectives).
NAMES = {
    "united states": "US", "united states of america": "US", "america": "US",
    "united kingdom": "GB", "great britain": "GB", "britain": "GB", "england": "GB",
    "scotland": "GB", "wales": "GB", "northern ireland": "GB",
}
# Bare words that end a title as a country tag ("House of Cards US"); anything else needs brackets.
TITLE_TAGS = frozenset({"US", "USA", "UK", "GB", "AU", "NZ"})
# Bracketed capitals that are ISO codes but in a title mean something else: (TV), [BD] Blu-ray, (SD).
NOT_TAGS = frozenset({"TV", "BD", "SD", "CC", "HI"})
_BRACKETED = re.compile(r"^(?P<base>.*\S)\s*[(\[]\s*(?P<tag>[A-Z]{2,3})\s*[)\]]\s*$", re.DOTALL)
_BARE = re.compile(r"^(?P<base>.*\S)\s+(?P<tag>[A-Z]{2,3})\s*$", re.DOTALL)


@functools.lru_cache(maxsize=1024)
def country_code(value: object) -> str | None:
    """ISO 3166-1 alpha-2 (uppercase) for an alpha-2/alpha-3 code, a common alias or an English name."""
    text = " ".join(str(value or "").replace("_", " ").split())
    if not text or len(text) > 60:
        return None
    upper = text.upper()
    if upper in ALIASES:
        return ALIASES[upper]
    if len(upper) == 2 and upper in ALPHA2:
        return upper
    if len(upper) == 3 and upper in ALPHA3:
        return ALPHA3[upper]
    return NAMES.get(text.casefold())


def split_country(title: str) -> tuple[str, str | None]:
    """`House of Cards (US)` / `House of Cards US` -> (`House of Cards`, `US`); other titles unchanged.

    A bracketed tag may be any ISO code (`Utopia (AU)`, `Forbrydelsen (DK)`); a bare trailing word
    only one of the few that releases use (`US`, `UK`, `AU`, `NZ`), in capitals, so that `Stand by
    Me` keeps its last word.
    """
    match = _BRACKETED.match(title)
    if match is None:
        match = _BARE.match(title)
        if match is None or match["tag"] not in TITLE_TAGS:
            return title, None
    if match["tag"] in NOT_TAGS:
        return title, None
    code, base = country_code(match["tag"]), match["base"].rstrip(" -–:,.")
    return (base, code) if code and base else (title, None)
