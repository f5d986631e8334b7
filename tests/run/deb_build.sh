#!/bin/sh
# make deb: dpkg-buildpackage writes the packages into the parent of the
# tree it builds, so this builds a copy of the checkout (without build/,
# .git and Python caches) in DEB_DIR/src/ringd-VERSION; the packages,
# .changes and .buildinfo end up in DEB_DIR, its log in DEB_DIR/build.log.
# Env: DEB_DIR, VERSION.
set -e
rm -rf $DEB_DIR; mkdir -p $DEB_DIR/src/ringd-$VERSION
tar -cf - --exclude=./build --exclude=./.git --exclude=__pycache__ \
	--exclude=.pytest_cache . | tar -xf - -C $DEB_DIR/src/ringd-$VERSION
echo "dpkg-buildpackage -us -uc -b in $DEB_DIR/src/ringd-$VERSION (log: $DEB_DIR/build.log)"
if ! (cd $DEB_DIR/src/ringd-$VERSION && dpkg-buildpackage -us -uc -b -Jauto) \
	>$DEB_DIR/build.log 2>&1; then
	tail -n 40 $DEB_DIR/build.log; echo "make deb: dpkg-buildpackage failed"; exit 1; fi
mv $DEB_DIR/src/*.deb $DEB_DIR/src/*.changes $DEB_DIR/src/*.buildinfo $DEB_DIR/
rm -rf $DEB_DIR/src; ls -l $DEB_DIR/*.deb
